"""Turn whatever a user hands us into an RGB uint8 array, or refuse it with `InvalidImage`.

Every entry point (enroll, identify, evaluate, prepare) reads photos through `load_image`, so the checks
below — EXIF orientation, mode conversion, truncation and decompression-bomb limits — apply everywhere.
PIL's global `LOAD_TRUNCATED_IMAGES` flag is never touched: a truncated upload is an error, not a grey band.
"""

from __future__ import annotations

import io
import os
import warnings
from pathlib import Path
from typing import Union

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from facerec.errors import ImageTooLarge, InvalidImage

DEFAULT_MAX_PIXELS = 40_000_000

ImageInput = Union[str, os.PathLike, bytes, bytearray, Image.Image, np.ndarray]


def load_image(source: ImageInput, max_pixels: int = DEFAULT_MAX_PIXELS, label: str | None = None) -> np.ndarray:
    """Decode `source` into an upright RGB image.

    Args:
        source: a file path, raw file bytes, a PIL image or a NumPy array (HxW gray, HxWx3 RGB, HxWx4 RGBA).
        max_pixels: refuse images with more pixels than this (decompression bombs, absurd scans).
        label: what messages call the photo (default: the file's name; "the uploaded data" for bytes), so the
            REST API names an upload as the web app names the same file.

    Returns:
        uint8 array of shape [H, W, 3], RGB, with EXIF orientation applied.

    Raises:
        InvalidImage: with a one-line reason a user can act on (ImageTooLarge when over `max_pixels`).
    """
    if isinstance(source, np.ndarray):
        return _array_to_rgb(source, max_pixels)
    if isinstance(source, Image.Image):
        return _pil_to_rgb(source, max_pixels)
    if isinstance(source, (bytes, bytearray)):
        if len(source) == 0:
            raise InvalidImage(f"{label} is empty" if label else "the file is empty")
        return _decode(io.BytesIO(bytes(source)), label or "the uploaded data", max_pixels)
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.is_file():
            raise InvalidImage(f"no such file: {path}")
        if path.stat().st_size == 0:
            raise InvalidImage(f"{label or path.name} is empty")
        with open(path, "rb") as handle:
            return _decode(io.BytesIO(handle.read()), label or path.name, max_pixels)
    raise InvalidImage(f"unsupported input type {type(source).__name__}; give a path, bytes, PIL image or array")


def _decode(stream: io.BytesIO, label: str, max_pixels: int) -> np.ndarray:
    try:
        with warnings.catch_warnings():
            # PIL warns (and raises above 2x its own limit); we apply our own, configurable limit instead.
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image = Image.open(stream)
            _check_size(image.size, max_pixels, label)
            image.load()
    except InvalidImage:
        raise
    except UnidentifiedImageError:
        raise InvalidImage(f"{label} is not an image (or not a format we can read)") from None
    except Image.DecompressionBombError:
        raise ImageTooLarge(f"{label} is too large to decode safely") from None
    except (OSError, SyntaxError, ValueError):
        raise InvalidImage(_undecodable(label)) from None
    return _pil_to_rgb(image, max_pixels, label)


def _pil_to_rgb(image: Image.Image, max_pixels: int, label: str = "the image") -> np.ndarray:
    _check_size(image.size, max_pixels, label)
    try:
        image.load()  # a lazily opened image may still hold a truncated file
    except (OSError, SyntaxError, ValueError):
        raise InvalidImage(_undecodable(label)) from None
    try:
        image = ImageOps.exif_transpose(image)
    except Exception:  # a broken EXIF block should not cost the user the photo
        pass
    try:
        rgb = _convert_mode(image)
    except (OSError, ValueError):
        raise InvalidImage(f"{label} has a pixel format facerec cannot read ({image.mode}); save it as an ordinary "
                           "RGB JPEG or PNG") from None
    return np.asarray(rgb, dtype=np.uint8).copy()


def _convert_mode(image: Image.Image) -> Image.Image:
    """Any PIL mode -> RGB. 16-bit and float modes are scaled, not clipped, so dark medical-style scans stay visible."""
    if image.mode == "RGB":
        return image
    if image.mode in ("I;16", "I;16B", "I;16L", "I;16N", "I", "F"):
        values = np.asarray(image, dtype=np.float64)
        top = values.max() if values.size else 0.0
        scale = 255.0 / top if top > 0 else 0.0
        gray = np.clip(values * scale, 0, 255).astype(np.uint8)
        return Image.fromarray(gray, "L").convert("RGB")
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        background = Image.new("RGB", rgba.size, (255, 255, 255))
        background.paste(rgba, mask=rgba.getchannel("A"))
        return background
    return image.convert("RGB")


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
