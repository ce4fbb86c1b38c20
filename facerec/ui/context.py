"""What every tab shares: the one Gallery, the admin gate, where Gradio keeps the files it holds, and the photos
pages keep to be asked about again."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import gradio as gr
from gradio.utils import get_upload_folder

from facerec.gallery import Gallery
from facerec.ui.admin_gate import AdminGate
from facerec.ui.kept_photos import KeptPhoto, KeptPhotos
from facerec.ui.uploads import CACHE_MAX_AGE_S, AnsweredPhoto


@dataclass
class AppContext:
    gallery: Gallery
    gate: AdminGate  # the admin password's one check, and the page's field for it
    app: gr.Blocks | None = None  # set once the Blocks exist
    web_cache: Path = field(default_factory=lambda: Path(get_upload_folder()))  # Gradio's uploads, its files
    kept_photos: KeptPhotos = field(default_factory=lambda: KeptPhotos(CACHE_MAX_AGE_S))  # for every page
    # Every page event that may change who is enrolled or the faces they are searched by, with the gr.State it
    # writes its success to: the Gallery tab's people list is shown again after each (`changes_people`).
    people_changes: list[tuple[object, gr.State]] = field(default_factory=list)

    def changes_people(self, event, ok: gr.State) -> None:
        """Record that `event` (which writes `ok`) may change the people or their faces. The page builder then
        refreshes the Gallery tab's table, counts and thumbnails after it, whichever tab it was in: a list
        refreshed only by its own tab's buttons went stale after a suggestion was named or a template removed
        (#51 item 1)."""
        self.people_changes.append((event, ok))

    def keep(self, answered: AnsweredPhoto | None) -> KeptPhoto | None:
        """What a page's session holds of a photo it answered about (None for none), the photo kept for it."""
        return None if answered is None else self.kept_photos.keep(answered.upload, answered.photo)

    def kept_state(self) -> gr.State:
        """A page's slot for a `KeptPhoto`: gone after `CACHE_MAX_AGE_S`, and its photo with it."""
        return gr.State(None, time_to_live=CACHE_MAX_AGE_S, delete_callback=self.kept_photos.forget)

    @property
    def password_needed(self) -> bool:
        return self.gate.needed
