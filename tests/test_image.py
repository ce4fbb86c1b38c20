"""facerec.faces.image.load_image: every accepted input becomes an upright RGB uint8 [H, W, 3] array; everything else is
refused with InvalidImage and a one-line reason.

Inputs are made from a real photo: a shipped public-domain portrait (tests/faces), scaled once to LFW's 250x250
into tmp_path, so the suite runs on any clone; derived files go only to tmp_path.
"""

from __future__ import annotations

import io
import os
import struct
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageFile

from facerec.errors import FaceRecError, InvalidImage
from facerec.faces.image import load_image

PERSON, INDEX = "Eileen_Collins", 1


@pytest.fixture(scope="module")
def photo_path(portrait, tmp_path_factory) -> Path:
    """The portrait as a 250x250 JPEG (LFW's size, which the shapes below assume), written once for the module."""
    path = tmp_path_factory.mktemp("photo") / f"{PERSON}_{INDEX:04d}.jpg"
    with Image.open(portrait(PERSON, INDEX)) as original:
        original.convert("RGB").resize((250, 250), Image.Resampling.LANCZOS).save(path, "JPEG", quality=90)
    return path


@pytest.fixture(scope="module")
def photo_bytes(photo_path) -> bytes:
    return photo_path.read_bytes()


@pytest.fixture(scope="module")
def rgb(photo_path) -> np.ndarray:
    """The photo decoded by PIL directly: the reference every lossless path must reproduce exactly."""
    with Image.open(photo_path) as image:
        array = np.asarray(image.convert("RGB"))
    assert array.shape == (250, 250, 3) and array.dtype == np.uint8
    return array


@pytest.fixture(scope="module")
def gray(rgb) -> np.ndarray:
    return np.asarray(Image.fromarray(rgb).convert("L"))


def assert_rgb(array: np.ndarray, shape: tuple[int, int]) -> None:
    assert isinstance(array, np.ndarray)
    assert array.dtype == np.uint8
    assert array.shape == (*shape, 3)


def assert_refused(source, *words: str, **kwargs) -> InvalidImage:
    with pytest.raises(InvalidImage) as caught:
        load_image(source, **kwargs)
    message = str(caught.value)
    assert message.strip() and "\n" not in message, f"not a one-line message: {message!r}"
    lowered = message.lower()
    assert any(word in lowered for word in words), f"{message!r} mentions none of {words}"
    return caught.value


def png_header_only(width: int, height: int) -> bytes:
    """A syntactically valid PNG that claims width x height RGB pixels but holds no pixel data."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"")) + chunk(b"IEND", b"")


# ---------------------------------------------------------------------------------------------------------------
# Accepted sources


def test_path_as_str_and_pathlike(photo_path, rgb):
    for source in (str(photo_path), photo_path):
        image = load_image(source)
        assert_rgb(image, (250, 250))
        assert np.array_equal(image, rgb)


def test_bytes_and_bytearray(photo_bytes, rgb):
    for source in (photo_bytes, bytearray(photo_bytes)):
        image = load_image(source)
        assert_rgb(image, (250, 250))
        assert np.array_equal(image, rgb)


def test_pil_image(photo_path, rgb):
    with Image.open(photo_path) as opened:
        image = load_image(opened)
    assert_rgb(image, (250, 250))
    assert np.array_equal(image, rgb)


def test_array_rgb_is_returned_unchanged(rgb):
    image = load_image(rgb)
    assert_rgb(image, (250, 250))
    assert np.array_equal(image, rgb)
    # a non-contiguous view (mirrored) is accepted too
    mirrored = load_image(rgb[:, ::-1])
    assert np.array_equal(mirrored, rgb[:, ::-1]) and mirrored.flags.c_contiguous


def test_array_gray_becomes_three_equal_channels(gray):
    for source in (gray, gray[:, :, None]):
        image = load_image(source)
        assert_rgb(image, (250, 250))
        for channel in range(3):
            assert np.array_equal(image[:, :, channel], gray)


def test_array_rgba_is_composited_on_white(rgb):
    alpha = np.full(rgb.shape[:2], 255, np.uint8)
    alpha[:, :100] = 0  # left band fully transparent
    alpha[:, 100:150] = 128  # half transparent
    image = load_image(np.dstack([rgb, alpha]))
    assert_rgb(image, (250, 250))
    assert np.all(image[:, :100] == 255)
    assert np.array_equal(image[:, 150:], rgb[:, 150:])
    blended = rgb[:, 100:150] * (128 / 255) + 255 * (1 - 128 / 255)
    assert np.abs(image[:, 100:150].astype(float) - blended).max() <= 1.5


def test_array_float_in_unit_range_is_scaled_by_255(rgb, gray):
    image = load_image(rgb.astype(np.float32) / 255.0)
    assert_rgb(image, (250, 250))
    assert np.array_equal(image, rgb)
    image = load_image(gray.astype(np.float64) / 255.0)
    assert np.array_equal(image[:, :, 1], gray)


def test_array_float_in_byte_range_is_kept(rgb):
    assert np.array_equal(load_image(rgb.astype(np.float64)), rgb)


def test_array_uint16_is_scaled_by_its_maximum(gray):
    wide = gray.astype(np.uint16) * 257
    image = load_image(wide)
    expected = np.rint(wide * (255.0 / wide.max()))
    assert np.abs(image[:, :, 0].astype(float) - expected).max() <= 1


# ---------------------------------------------------------------------------------------------------------------
# PIL modes, written to tmp_path in a format that keeps them


def save(image: Image.Image, path: Path, **kwargs) -> tuple[Path, str]:
    image.save(path, **kwargs)
    with Image.open(path) as reopened:
        reopened_mode = reopened.mode
    return path, reopened_mode


def test_mode_L_png(tmp_path, rgb, gray):
    path, mode = save(Image.fromarray(gray, "L"), tmp_path / "gray.png")
    assert mode == "L"
    image = load_image(path)
    assert_rgb(image, (250, 250))
    assert all(np.array_equal(image[:, :, c], gray) for c in range(3))


def test_mode_1_bilevel_png(tmp_path, gray):
    path, mode = save(Image.fromarray(gray, "L").convert("1"), tmp_path / "bilevel.png")
    assert mode == "1"
    image = load_image(path)
    assert_rgb(image, (250, 250))
    assert set(np.unique(image)) <= {0, 255} and len(np.unique(image)) == 2


def test_mode_LA_png_transparent_part_is_white(tmp_path, gray):
    alpha = np.full(gray.shape, 255, np.uint8)
    alpha[200:] = 0
    path, mode = save(Image.fromarray(np.dstack([gray, alpha]), "LA"), tmp_path / "gray_alpha.png")
    assert mode == "LA"
    image = load_image(path)
    assert_rgb(image, (250, 250))
    assert np.all(image[200:] == 255)
    assert all(np.array_equal(image[:200, :, c], gray[:200]) for c in range(3))


def test_mode_P_png(tmp_path, rgb):
    palette = Image.fromarray(rgb).convert("P", palette=Image.Palette.ADAPTIVE, colors=64)
    path, mode = save(palette, tmp_path / "palette.png")
    assert mode == "P"
    image = load_image(path)
    assert_rgb(image, (250, 250))
    assert np.array_equal(image, np.asarray(palette.convert("RGB")))
    assert np.abs(image.astype(float) - rgb).mean() < 10  # still the photo


def test_mode_P_with_transparency_png(tmp_path, rgb):
    palette = Image.fromarray(rgb).convert("P", palette=Image.Palette.ADAPTIVE, colors=64)
    indices = np.asarray(palette)
    transparent = int(indices[0, 0])
    path, mode = save(palette, tmp_path / "palette_transparent.png", transparency=transparent)
    assert mode == "P"
    with Image.open(path) as reopened:
        assert reopened.info.get("transparency") == transparent
    image = load_image(path)
    assert_rgb(image, (250, 250))
    hidden = indices == transparent
    assert hidden.any() and not hidden.all()
    assert np.all(image[hidden] == 255)
    assert np.array_equal(image[~hidden], np.asarray(palette.convert("RGB"))[~hidden])


def test_mode_RGBA_png(tmp_path, rgb):
    alpha = np.full(rgb.shape[:2], 255, np.uint8)
    alpha[:50] = 0
    path, mode = save(Image.fromarray(np.dstack([rgb, alpha]), "RGBA"), tmp_path / "rgba.png")
    assert mode == "RGBA"
    image = load_image(path)
    assert_rgb(image, (250, 250))
    assert np.all(image[:50] == 255)
    assert np.array_equal(image[50:], rgb[50:])


def test_mode_CMYK_jpeg(tmp_path, rgb):
    cmyk = Image.fromarray(rgb).convert("CMYK")
    path, mode = save(cmyk, tmp_path / "cmyk.jpg", quality=95)
    assert mode == "CMYK"
    image = load_image(path)
    assert_rgb(image, (250, 250))
    assert np.abs(image.astype(float) - rgb).mean() < 3


def test_mode_I16_is_scaled_to_full_range(tmp_path, gray):
    wide = gray.astype(np.uint16) * 257
    path, mode = save(Image.fromarray(wide), tmp_path / "sixteen.png")
    assert mode.startswith("I")  # I;16 (or I, depending on the plugin)
    image = load_image(path)
    assert_rgb(image, (250, 250))
    assert np.array_equal(image[:, :, 0], image[:, :, 2])
    # facerec scales 16-bit images by their own maximum (see _convert_mode)
    expected = np.clip(wide * (255.0 / wide.max()), 0, 255).astype(np.uint8)
    assert np.abs(image[:, :, 0].astype(int) - expected).max() <= 1
    assert image.max() == 255


def test_mode_F_image(gray):
    values = gray.astype(np.float32) * 10.0  # arbitrary float scale
    image = load_image(Image.fromarray(values, "F"))
    assert_rgb(image, (250, 250))
    expected = np.clip(values * (255.0 / values.max()), 0, 255).astype(np.uint8)
    assert np.abs(image[:, :, 0].astype(int) - expected).max() <= 1


@pytest.mark.parametrize("suffix", ["tif", "gif", "ico", "pcx", "tga"])
def test_formats_beyond_jpeg_png_webp_bmp_are_refused(tmp_path, rgb, suffix):
    """Pillow reads these, but facerec opens only JPEG, PNG, WebP and BMP (formats that run programs or old
    parsers never reach a decoder); the message names the formats it reads."""
    path = tmp_path / f"photo.{suffix}"
    Image.fromarray(rgb[:64, :64]).save(path)
    for source in (path, path.read_bytes()):
        assert "jpeg, png, webp or bmp" in str(assert_refused(source, "not an image")).lower()


# ---------------------------------------------------------------------------------------------------------------
# EXIF orientation


def stored_for_orientation(upright: np.ndarray, orientation: int) -> np.ndarray:
    """The pixels a camera stores for an upright scene, per the EXIF definition of each Orientation value."""
    return {
        1: lambda a: a,
        2: lambda a: a[:, ::-1],  # mirrored horizontally
        3: lambda a: a[::-1, ::-1],  # rotated 180
        4: lambda a: a[::-1],  # mirrored vertically
        5: lambda a: a.transpose(1, 0, 2),  # mirrored about the main diagonal
        6: lambda a: np.rot90(a, 1),  # needs 90 degrees clockwise to view
        7: lambda a: np.rot90(a, 1)[:, ::-1],
        8: lambda a: np.rot90(a, -1),  # needs 90 degrees counter-clockwise to view
    }[orientation](upright)


def with_orientation(pixels: np.ndarray, orientation: int, path: Path, **kwargs) -> Path:
    exif = Image.Exif()
    exif[0x0112] = orientation
    Image.fromarray(np.ascontiguousarray(pixels)).save(path, exif=exif, **kwargs)
    with Image.open(path) as reopened:
        assert reopened.getexif().get(0x0112) == orientation
    return path


@pytest.mark.parametrize("orientation", range(1, 9))
def test_exif_orientation_is_applied_png(tmp_path, rgb, orientation):
    upright = rgb[:180]  # not square, so a wrong rotation also shows in the shape
    path = with_orientation(stored_for_orientation(upright, orientation), orientation, tmp_path / "oriented.png")
    image = load_image(path)
    assert_rgb(image, (180, 250))
    assert np.array_equal(image, upright)


@pytest.mark.parametrize("orientation", [6, 8])
def test_exif_orientation_is_applied_jpeg_from_every_source(tmp_path, rgb, orientation):
    upright = rgb[:180]
    stored = stored_for_orientation(upright, orientation)
    assert stored.shape[:2] == (250, 180)
    path = with_orientation(stored, orientation, tmp_path / "oriented.jpg", quality=95)
    with Image.open(path) as opened:
        from_pil = load_image(opened)
    for image in (load_image(path), load_image(path.read_bytes()), from_pil):
        assert_rgb(image, (180, 250))
        assert np.abs(image.astype(float) - upright).mean() < 3  # JPEG re-encoding only
        # and clearly not the other rotation
        assert np.abs(image.astype(float) - upright[::-1, ::-1]).mean() > 20


# ---------------------------------------------------------------------------------------------------------------
# Refusals


def test_invalid_image_is_a_facerec_error():
    assert issubclass(InvalidImage, FaceRecError)


def test_text_file_is_refused(tmp_path):
    path = tmp_path / "notes.jpg"
    path.write_text("this is not a photo\n" * 20)
    assert_refused(path, "not an image")
    assert_refused(path.read_bytes(), "not an image")


def test_empty_file_and_empty_bytes_are_refused(tmp_path):
    path = tmp_path / "empty.jpg"
    path.write_bytes(b"")
    assert_refused(path, "empty")
    assert_refused(b"", "empty")
    assert_refused(bytearray(), "empty")


def test_truncated_jpeg_is_refused(tmp_path, photo_bytes):
    half = photo_bytes[: len(photo_bytes) // 2]
    path = tmp_path / "half.jpg"
    path.write_bytes(half)
    assert_refused(path, "truncated")
    assert_refused(half, "truncated")
    assert ImageFile.LOAD_TRUNCATED_IMAGES is False


def test_load_truncated_images_flag_is_left_false(photo_path, photo_bytes):
    assert ImageFile.LOAD_TRUNCATED_IMAGES is False
    load_image(photo_path)
    load_image(photo_bytes)
    with pytest.raises(InvalidImage):
        load_image(photo_bytes[: len(photo_bytes) // 2])
    assert ImageFile.LOAD_TRUNCATED_IMAGES is False


def test_truncated_pil_image_is_refused(photo_bytes):
    opened = Image.open(io.BytesIO(photo_bytes[: len(photo_bytes) // 2]))
    assert_refused(opened, "truncated", "decoded")


@pytest.mark.parametrize(
    "array",
    [np.zeros((0, 10, 3), np.uint8), np.zeros((10, 0), np.uint8), np.zeros((0, 0, 4), np.uint8)],
    ids=["0xWx3", "Hx0", "0x0x4"],
)
def test_zero_size_array_is_refused(array):
    assert_refused(array, "zero size")


@pytest.mark.parametrize(
    "array",
    [np.zeros((10, 10, 2), np.uint8), np.zeros((2, 10, 10, 3), np.uint8), np.zeros(10, np.uint8)],
    ids=["two-channels", "batch", "1d"],
)
def test_wrong_array_shape_is_refused(array):
    assert_refused(array, "hxw")


def test_non_finite_or_non_numeric_array_is_refused():
    values = np.zeros((10, 10, 3), np.float32)
    values[3, 3, 1] = np.nan
    assert_refused(values, "finite")
    assert_refused(np.full((10, 10), np.inf), "finite")
    assert_refused(np.zeros((10, 10), dtype=object), "finite")


def test_more_pixels_than_max_pixels_is_refused_from_every_source(photo_path, photo_bytes, rgb):
    pixels = 250 * 250
    with Image.open(photo_path) as opened:
        for source in (photo_path, photo_bytes, opened, rgb):
            assert_refused(source, "limit", max_pixels=pixels - 1)
            assert_rgb(load_image(source, max_pixels=pixels), (250, 250))  # exactly at the limit is fine


def test_png_claiming_too_many_pixels_is_refused_before_decoding(tmp_path):
    # 8000 x 8000 = 64 MP: over facerec's default 40 MP limit (and under PIL's own bomb limit).
    claim = png_header_only(8000, 8000)
    assert len(claim) < 100
    assert_refused(claim, "limit", "too large")
    path = tmp_path / "bomb.png"
    path.write_bytes(claim)
    assert_refused(path, "limit", "too large")
    # 100,000 x 100,000: far beyond PIL's own decompression-bomb limit; still a clean InvalidImage.
    assert_refused(png_header_only(100_000, 100_000), "too large", "limit")


@pytest.mark.parametrize("source", [42, 3.5, None, ["a.jpg"], {"path": "a.jpg"}, memoryview(b"abc")],
                         ids=["int", "float", "none", "list", "dict", "memoryview"])
def test_unsupported_input_type_is_refused(source):
    assert_refused(source, "unsupported input type")


def test_missing_path_and_directory_are_refused(tmp_path):
    assert_refused(tmp_path / "does-not-exist.jpg", "no such file")
    assert_refused(str(tmp_path / "does-not-exist.jpg"), "no such file")
    assert_refused(tmp_path, "no such file")


# ---------------------------------------------------------------------------------------------------------------
# The dataset fixtures themselves (tests/conftest.py): FACEREC_DATA override, fail under CI, skip elsewhere.


def run_pytest_with_data_dir(tmp_path: Path, data: Path, ci: str | None) -> subprocess.CompletedProcess:
    project = tmp_path / "project"
    (project / "tests").mkdir(parents=True, exist_ok=True)
    for helper in ("conftest.py", "ci_environment.py"):  # the fixtures, and what they import beside them
        (project / "tests" / helper).write_text(Path(__file__).with_name(helper).read_text())
    (project / "tests" / "test_needs_data.py").write_text(
        textwrap.dedent(
            """
            def test_needs_data(data_dir, lfw):
                assert (lfw / "Someone" / "Someone_0001.jpg").is_file()
            """
        )
    )
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_ADDOPTS")}
    env["FACEREC_DATA"] = str(data)
    if ci is not None:
        env["CI"] = ci
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "tests"],
        cwd=project, env=env, capture_output=True, text=True, timeout=120,
    )


def test_data_dir_fixture_override_fail_in_ci_and_skip_elsewhere(tmp_path):
    fake = tmp_path / "fake-data"
    (fake / "lfw" / "Someone").mkdir(parents=True)
    Image.new("RGB", (8, 8)).save(fake / "lfw" / "Someone" / "Someone_0001.jpg")

    found = run_pytest_with_data_dir(tmp_path, fake, ci="true")
    assert found.returncode == 0 and "1 passed" in found.stdout, found.stdout + found.stderr

    missing = tmp_path / "no-such-data"
    in_ci = run_pytest_with_data_dir(tmp_path, missing, ci="true")
    assert in_ci.returncode != 0 and "1 error" in in_ci.stdout, in_ci.stdout + in_ci.stderr
    assert "FACEREC_DATA" in in_ci.stdout

    outside_ci = run_pytest_with_data_dir(tmp_path, missing, ci=None)
    assert outside_ci.returncode == 0 and "1 skipped" in outside_ci.stdout, outside_ci.stdout + outside_ci.stderr
