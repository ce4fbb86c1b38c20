"""Photos at the pixel limit decode within a memory bound (SECURITY.md, "Limits on what anyone can make the server
do"; benchmarks/flood.py measures the app under 8 anonymous clients sending them).

Issue #48 row 6: 8 anonymous clients sending a 40 MP WebP (88 kB) and a 40 MP JPEG (613 kB) took the app to 1,937 MB
(the bound is 1.5 GB). One decode of the JPEG grew a process by 580 MB (the decoded photo, a PIL copy for EXIF,
the array's bytes, its copy, a contiguous copy to shrink), the WebP by 890 MB (Pillow's WebP decoder cannot scale
and holds two RGBA canvases and a copy). Each is measured in a fresh process (its peak resident memory)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from app_server import REPO_ROOT

from facerec.errors import ImageTooLarge
from facerec.faces.image import MAX_WEBP_PIXELS, decode_photo

MEASURE = """
import io, resource, sys
import numpy as np
from PIL import Image
from facerec.faces.image import decode_photo
picture = Image.new("RGB", (7300, 5479), (128, 120, 110))  # 40.0 MP, the pixel limit
picture.paste(Image.fromarray(np.random.default_rng(6).integers(0, 255, (130, 130, 3), dtype=np.uint8)), (1000, 1000))
buffer = io.BytesIO()
picture.save(buffer, "JPEG", quality=85)
del picture
data = buffer.getvalue()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
pixels, scale = decode_photo(data, working_pixels=16_000_000)
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print(len(data), grown * 1024, pixels.shape[0] * pixels.shape[1], round(scale, 2))
"""


def test_a_40_megapixel_jpeg_is_decoded_to_the_working_size_within_a_memory_bound():
    """Resized by Pillow as decoded, before any copy: under 10 bytes per pixel of the photo (580 MB before,
    14.5 bytes per pixel)."""
    done = subprocess.run([sys.executable, "-c", MEASURE], capture_output=True, text=True, cwd=REPO_ROOT,
                          timeout=300, check=True)
    size, grown, working, scale = done.stdout.split()
    assert int(size) < 1_000_000 and 15_000_000 < int(working) <= 16_000_000 and scale == "0.63", done.stdout
    assert int(grown) < 10 * 7300 * 5479, f"decoding grew the process by {int(grown) / 2**20:.0f} MB"


def test_a_webp_over_16_megapixels_is_refused_by_its_header(tmp_path):
    import numpy as np
    from PIL import Image

    path = tmp_path / "forty.webp"
    Image.fromarray(np.full((5479, 7300, 3), 120, np.uint8)).save(path, "WEBP", quality=50, method=0)
    with pytest.raises(ImageTooLarge) as refused:
        decode_photo(path, working_pixels=16_000_000)
    message = str(refused.value)
    assert "\n" not in message and "forty.webp is a WebP of 40.0 MP" in message and "save it as a JPEG" in message
    assert MAX_WEBP_PIXELS == 16_000_000
    small = tmp_path / "sixteen.webp"  # at the limit: decoded
    Image.fromarray(np.full((3464, 4618, 3), 120, np.uint8)).save(small, "WEBP", quality=50, method=0)
    assert decode_photo(small, working_pixels=16_000_000)[0].shape == (3464, 4618, 3)
