"""Pictures the app shows (the annotated photo, the faces found, the aligned crop) sent inside the page, never
written to the server's disk.

Why: Gradio saves every picture an action returns as a file in its cache (`image.webp`) and serves it from there
for up to `facerec.ui.uploads.CACHE_MAX_AGE_S`, so a whole annotated photo of people who were only identified
stayed on the server after the answer. A `PagePicture` is encoded once into a `data:` URL that travels in the
answer itself, as the thumbnails of `facerec.ui.views` do: when the page is closed, it is gone.
"""

from __future__ import annotations

import base64
import io

import gradio as gr
import numpy as np
from gradio.data_classes import ImageData
from PIL import Image

from facerec.faces.image import shrunk

MAX_SIDE = 2048  # pixels: a picture larger than a screen is shown (and sent) at most this large
QUALITY = 90


def data_url(pixels: np.ndarray, max_side: int = MAX_SIDE) -> str:
    """An RGB uint8 picture as a `data:image/webp` URL, shrunk to `max_side` when larger."""
    image = Image.fromarray(np.ascontiguousarray(shrunk(np.asarray(pixels, np.uint8), max_side)[0]))
    buffer = io.BytesIO()
    image.save(buffer, "WEBP", quality=QUALITY)
    return "data:image/webp;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def page_picture(label: str, **options) -> "PagePicture":
    """An output-only picture with nothing drawn over it: Gradio's floating label and toolbar icons covered the
    labels drawn on the photo's top edge (most of it on a phone), so `label` becomes its alternative text."""
    return PagePicture(type="numpy", label=label, show_label=False, buttons=[], alt_text=label, interactive=False,
                       **options)


def captioned_picture(label: str, elem_id: str, **options) -> "PagePicture":
    """A `page_picture` with `label` written above it as a caption: without Gradio's floating label an empty box
    said nothing of what it would show (the Enroll tab's two boxes), and a caption outside the box covers nothing
    drawn on the photo. The caption is `<elem_id>-caption`."""
    with gr.Column(min_width=160):
        gr.Markdown(f"**{label}**", elem_id=f"{elem_id}-caption", padding=False)
        return page_picture(label, elem_id=elem_id, **options)


class PagePicture(gr.Image):
    """An image whose value (an RGB array) is sent as a `data:` URL instead of a cached file (made by
    `page_picture`; Gradio describes a component to the page by its constructor's parameters, so a subclass keeps
    gr.Image's)."""

    is_template = True  # rendered by gr.Image's frontend

    def postprocess(self, value) -> ImageData | None:
        if value is None:
            return None
        return ImageData(url=data_url(np.asarray(value)), orig_name="picture.webp")
