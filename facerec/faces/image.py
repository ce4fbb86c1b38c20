"""Turn whatever a user hands us into an RGB uint8 array, or refuse it with `InvalidImage`.

Every entry point (enroll, identify, evaluate, prepare) reads photos through `load_image`, so the checks
below — the formats opened, EXIF orientation, mode conversion, truncation and decompression-bomb limits — apply
everywhere. PIL's global `LOAD_TRUNCATED_IMAGES` flag is never touched: a truncated upload is an error, not a grey
band.

Only `FORMATS` are ever opened (JPEG, with the multi-picture JPEG phones write, PNG, WebP, BMP): Pillow knows
dozens more, and some run programs or old parsers: an EPS upload makes Pillow start Ghostscript, which loops
forever on a two-line file. A WebP may have at most MAX_WEBP_PIXELS, since its decoder cannot scale and holds four
times a JPEG's memory per pixel. Decoding is bounded too: photos over `UNGATED_PIXELS` are decoded `DECODES_AT_ONCE` at a
time, whatever the number of requests (an ordinary photo never waits behind them), a photo over the caller's
working size is shrunk while decoding (a JPEG by its decoder's own scaling), and a 16-bit or float photo is scaled
to 8 bits in strips (a float64 copy of a whole 16-bit scan of 40 MP cost 730 MB more per request);
tests/test_hostile_photos.py measures the bound, benchmarks/flood.py the app under a flood.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import threading
import warnings
from pathlib import Path
from typing import Union

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from facerec.errors import ImageTooLarge, InvalidImage

DEFAULT_MAX_PIXELS = 40_000_000
FORMATS = ("JPEG", "PNG", "WEBP", "BMP")  # what Pillow may open (JPEG includes phones' MPO); never EPS, TIFF...
FORMAT_NAMES = "JPEG, PNG, WebP or BMP"
DECODES_AT_ONCE = 1  # large photos decoded at a time, whatever the number of requests: memory stays bounded (a
#                     decode takes a fraction of a second, so two cores lose little by it)
UNGATED_PIXELS = 4_000_000  # photos up to this size (a few MB to decode) never wait behind a large one
MAX_WEBP_PIXELS = 16_000_000  # Pillow decodes WebP through libwebp's animation decoder: two RGBA canvases and a
#                              copy, 16 bytes a pixel (a 40 MP WebP held 620 MB for its decode, 4x a JPEG's)
STRIP_ROWS = 256  # rows scaled at a time when a 16-bit or float photo becomes 8-bit
WIDE_MODES = ("I;16", "I;16B", "I;16L", "I;16N", "I", "F")  # gray modes wider than a byte per pixel
RESIZED_AS_DECODED = ("RGB", "RGBA", "RGBX", "L", "LA", "CMYK")  # modes Pillow resizes smoothly as they are
_decoding = threading.BoundedSemaphore(DECODES_AT_ONCE)

ImageInput = Union[str, os.PathLike, bytes, bytearray, Image.Image, np.ndarray]


def load_image(source: ImageInput, max_pixels: int = DEFAULT_MAX_PIXELS, label: str | None = None) -> np.ndarray:
    """`decode_photo` at full resolution: the pixels alone."""
    return decode_photo(source, max_pixels, label)[0]


def decode_photo(source: ImageInput, max_pixels: int = DEFAULT_MAX_PIXELS, label: str | None = None,
                 working_pixels: int | None = None) -> tuple[np.ndarray, float]:
    """Decode `source` into an upright RGB image.

    Args:
        source: a file path, raw file bytes, a PIL image or a NumPy array (HxW gray, HxWx3 RGB, HxWx4 RGBA).
        max_pixels: refuse images with more pixels than this (decompression bombs, absurd scans).
        label: what messages call the photo (default: the file's name; "the uploaded data" for bytes), so the
            REST API names an upload as the web app names the same file.

        working_pixels: a photo larger than this is shrunk to it while decoding (a JPEG is decoded at a reduced
            scale by the decoder itself), so a large photo costs what a photo of this size does from then on.

    Returns:
        (uint8 array of shape [H, W, 3], RGB, with EXIF orientation applied; the scale of that array against the
        photo's own size, 1.0 unless it was shrunk).

    Raises:
        InvalidImage: with a one-line reason a user can act on (ImageTooLarge when over `max_pixels`).
    """
    if isinstance(source, np.ndarray):
        return _working(_array_to_rgb(source, max_pixels), working_pixels)
    if isinstance(source, Image.Image):
        return _working(_pil_to_rgb(source, max_pixels), working_pixels)
    if isinstance(source, (bytes, bytearray)):
        if len(source) == 0:
            raise InvalidImage(f"{label} is empty" if label else "the file is empty")
        return _decode(io.BytesIO(bytes(source)), label or "the uploaded data", max_pixels, working_pixels)
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.is_file():
            raise InvalidImage(f"no such file: {path}")
        if path.stat().st_size == 0:
            raise InvalidImage(f"{label or path.name} is empty")
        with open(path, "rb") as handle:
            return _decode(io.BytesIO(handle.read()), label or path.name, max_pixels, working_pixels)
    raise InvalidImage(f"unsupported input type {type(source).__name__}; give a path, bytes, PIL image or array")


def open_photo(stream, label: str, max_pixels: int) -> Image.Image:
    """Pillow's lazily opened image of `stream` (a file object or path): only `FORMATS`, within `max_pixels`, its
    pixels not yet decoded. InvalidImage (one line) for anything else; nothing but the header is read."""
    try:
        with warnings.catch_warnings():
            # PIL warns (and raises above 2x its own limit); we apply our own, configurable limit instead.
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image = Image.open(stream, formats=FORMATS)
    except UnidentifiedImageError:
        raise InvalidImage(f"{label} is not an image facerec reads (it reads {FORMAT_NAMES})") from None
    except Image.DecompressionBombError:
        raise ImageTooLarge(f"{label} is too large to decode safely") from None
    except (OSError, SyntaxError, ValueError):
        raise InvalidImage(_undecodable(label)) from None
    _check_size(image.size, max_pixels, label)
    if image.format == "WEBP" and image.width * image.height > MAX_WEBP_PIXELS:
        raise ImageTooLarge(f"{label} is a WebP of {image.width * image.height / 1e6:.1f} MP, over the limit of "
                            f"{MAX_WEBP_PIXELS:,} pixels for WebP; save it as a JPEG (up to {max_pixels:,} pixels)")
    return image


def check_photo_file(path: str | os.PathLike, label: str, max_pixels: int = DEFAULT_MAX_PIXELS) -> None:
    """What `load_image` would refuse of a file without decoding it: empty, not one of `FORMATS`, over
    `max_pixels` by its header (InvalidImage, the same one line `load_image` gives)."""
    path = Path(path)
    if path.stat().st_size == 0:
        raise InvalidImage(f"{label} is empty")
    with open(path, "rb") as handle:
        open_photo(handle, label, max_pixels)


def _decode(stream: io.BytesIO, label: str, max_pixels: int,
            working_pixels: int | None = None) -> tuple[np.ndarray, float]:
    image = open_photo(stream, label, max_pixels)
    width, height = image.size
    with _decoding if width * height > UNGATED_PIXELS else contextlib.nullcontext():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", Image.DecompressionBombWarning)
                if working_pixels and image.format == "JPEG" and width * height > working_pixels:
                    side = math.sqrt(working_pixels / (width * height))  # the decoder's own 1/2, 1/4, 1/8
                    image.draft("RGB", (math.ceil(width * side), math.ceil(height * side)))
                image.load()
        except Image.DecompressionBombError:
            raise ImageTooLarge(f"{label} is too large to decode safely") from None
        except (OSError, SyntaxError, ValueError):
            raise InvalidImage(_undecodable(label)) from None
        upright_width = _upright_width(image, width, height)
        if image.mode in WIDE_MODES:  # transposed in place: a copy of a 40 MP 16-bit scan is 80 MB
            ImageOps.exif_transpose(image, in_place=True)
            pixels = _wide_to_rgb(image, working_pixels)
        elif working_pixels and image.width * image.height > working_pixels and image.mode in RESIZED_AS_DECODED:
            image = _resized_to(image, working_pixels)  # the decoded full size is freed here, before any copy
            pixels = _pil_to_rgb(image, max_pixels, label)
        else:
            pixels, _ = _working(_pil_to_rgb(image, max_pixels, label), working_pixels)
        return pixels, pixels.shape[1] / upright_width  # the draft's reduction included


def _resized_to(image: Image.Image, working_pixels: int) -> Image.Image:
    """A decoded photo over `working_pixels` resized to it by Pillow itself, before anything else is done with it.
    Why: turning a 40 MP photo into an array first (a PIL copy for EXIF, the array's bytes, its copy, then a
    contiguous copy to shrink) held 580 MB for a JPEG and 890 MB for a WebP (whose decoder cannot scale) per
    decode; resized first, a decode holds the decoded photo and its working copy (120 + 48 MB for 40 MP RGB)."""
    side = math.sqrt(working_pixels / (image.width * image.height))
    size = (max(1, int(image.width * side)), max(1, int(image.height * side)))
    return image.resize(size, Image.BILINEAR)


def _working(pixels: np.ndarray, working_pixels: int | None) -> tuple[np.ndarray, float]:
    """`pixels` shrunk to at most `working_pixels` (and the scale), or as they are."""
    height, width = pixels.shape[:2]
    if not working_pixels or height * width <= working_pixels:
        return pixels, 1.0
    return shrunk(pixels, int(max(height, width) * math.sqrt(working_pixels / (height * width))))


def _upright_width(image: Image.Image, width: int, height: int) -> int:
    """The photo's width as shown (EXIF orientation applied), from its header's size."""
    try:
        orientation = image.getexif().get(0x0112, 1)
    except Exception:  # noqa: BLE001 - a broken EXIF block: as stored
        orientation = 1
    return height if orientation in (5, 6, 7, 8) else width


def _pil_to_rgb(image: Image.Image, max_pixels: int, label: str = "the image") -> np.ndarray:
    _check_size(image.size, max_pixels, label)
    try:
        image.load()  # a lazily opened image may still hold a truncated file
    except (OSError, SyntaxError, ValueError):
        raise InvalidImage(_undecodable(label)) from None
    image = _upright(image)
    try:
        if image.mode in WIDE_MODES:
            return _wide_to_rgb(image)
        rgb = _convert_mode(image)
    except (OSError, ValueError):
        raise InvalidImage(f"{label} has a pixel format facerec cannot read ({image.mode}); save it as an ordinary "
                           "RGB JPEG or PNG") from None
    return np.asarray(rgb, dtype=np.uint8).copy()


def _upright(image: Image.Image) -> Image.Image:
    """The image turned as its EXIF orientation says; the image itself when it needs no turn (Pillow's
    `exif_transpose` copies every image, a whole photo's worth of memory for nothing) or its EXIF is broken (a
    broken block should not cost the user the photo)."""
    try:
        if image.getexif().get(0x0112, 1) in (2, 3, 4, 5, 6, 7, 8):
            return ImageOps.exif_transpose(image)
    except Exception:  # noqa: BLE001 - see above
        pass
    return image


def _convert_mode(image: Image.Image) -> Image.Image:
    """Any 8-bit PIL mode -> RGB (16-bit and float modes: `_scaled_to_bytes`)."""
    if image.mode == "RGB":
        return image
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        background = Image.new("RGB", rgba.size, (255, 255, 255))
        background.paste(rgba, mask=rgba.getchannel("A"))
        return background
    return image.convert("RGB")


def shrunk(pixels: np.ndarray, max_side: int) -> tuple[np.ndarray, float]:
    """(`pixels` with its longer side at most `max_side`, the scale applied): a large photo is first thinned by
    an integer stride (a view, no copy) to about twice the size wanted, then resized smoothly, so shrinking a 40 MP
    photo never makes a full-size copy of it (a PIL copy of one costs 160 MB, and several ran at once)."""
    height, width = pixels.shape[:2]
    scale = min(1.0, max_side / max(height, width))
    if scale >= 1.0:
        return pixels, 1.0
    stride = max(1, int(1 / scale) // 2)
    thinned = np.ascontiguousarray(pixels[::stride, ::stride])
    size = (max(1, round(width * scale)), max(1, round(height * scale)))
    return np.asarray(Image.fromarray(thinned).resize(size, Image.BILINEAR)), scale


def _wide_to_rgb(image: Image.Image, working_pixels: int | None = None) -> np.ndarray:
    """A 16-bit, 32-bit or float gray image as RGB bytes: scaled to 8 bits a strip at a time (no full-size wide
    copy), shrunk to `working_pixels` while still one byte a pixel, then made RGB."""
    gray, _ = _working(_scaled_to_bytes(image), working_pixels)
    return np.repeat(gray[:, :, None], 3, axis=2)


def _scaled_to_bytes(image: Image.Image) -> np.ndarray:
    """A 16-bit, 32-bit or float gray image scaled by its maximum (not clipped, so dark scans stay visible) to
    uint8, `STRIP_ROWS` rows at a time: a float64 copy of a whole 40 MP scan cost 320 MB per request."""
    width, height = image.size

    def strips():
        for top in range(0, height, STRIP_ROWS):
            rows = np.asarray(image.crop((0, top, width, min(height, top + STRIP_ROWS)))).astype(np.float32)
            yield top, np.nan_to_num(rows, nan=0.0, posinf=0.0, neginf=0.0)

    peak = max((float(rows.max()) for _top, rows in strips() if rows.size), default=0.0)
    scale = np.float32(255.0 / peak if peak > 0 else 0.0)
    gray = np.empty((height, width), np.uint8)
    for top, rows in strips():
        gray[top:top + len(rows)] = np.clip(rows * scale, 0, 255).astype(np.uint8)
    return gray


def _array_to_rgb(array: np.ndarray, max_pixels: int) -> np.ndarray:
    if array.ndim == 3 and array.shape[2] == 1:
        array = array[:, :, 0]
    if array.ndim not in (2, 3) or (array.ndim == 3 and array.shape[2] not in (3, 4)):
        raise InvalidImage(f"an image array must be HxW, HxWx3 or HxWx4, got shape {array.shape}")
    if array.shape[0] == 0 or array.shape[1] == 0:
        raise InvalidImage("the image has zero size")
    _check_size((array.shape[1], array.shape[0]), max_pixels, "the image")
    if array.dtype != np.uint8:
        if not np.issubdtype(array.dtype, np.number) or not np.all(np.isfinite(array)):
            raise InvalidImage("the image array must hold finite numbers")
        array = _rescale_to_uint8(array)
    if array.ndim == 2:
        return np.repeat(array[:, :, None], 3, axis=2)
    if array.shape[2] == 4:
        return _pil_to_rgb(Image.fromarray(np.ascontiguousarray(array), "RGBA"), max_pixels)
    return np.ascontiguousarray(array)


def _rescale_to_uint8(array: np.ndarray) -> np.ndarray:
    """Floats in [0, 1] are scaled by 255; anything else wider than uint8 is scaled by its maximum."""
    values = array.astype(np.float64)
    top = float(values.max()) if values.size else 0.0
    if np.issubdtype(array.dtype, np.floating) and top <= 1.0:
        values = values * 255.0
    elif top > 255:
        values = values * (255.0 / top)
    return np.clip(np.rint(values), 0, 255).astype(np.uint8)


def _check_size(size: tuple[int, int], max_pixels: int, label: str) -> None:
    width, height = size
    if width <= 0 or height <= 0:
        raise InvalidImage(f"{label} has zero size")
    if width * height > max_pixels:
        raise ImageTooLarge(
            f"{label} is {width}x{height} = {width * height / 1e6:.1f} MP, over the limit of {max_pixels:,} pixels"
        )


def _undecodable(label: str) -> str:
    """The message for a file that opens as an image but cannot be decoded: in our words, not the decoder's (its
    text, such as Pillow's 'image file is truncated (5 bytes not processed)', helps no user)."""
    return f"{label} is truncated or corrupt: it could not be decoded; use the complete, original file"
