"""Export and import on the Gallery tab: the gallery as a portable zip, and one read back, all or nothing."""

from __future__ import annotations

import tempfile
from pathlib import Path

import gradio as gr

from facerec.errors import InvalidArgument
from facerec.ui.tab_actions import TabActions
from facerec.ui.uploads import EXPORT_LIFETIME_S, delete_later, forget_upload
from facerec.words.phrasing import plural


class TransferPanel:
    """The accordion; `wire` registers its two actions once every panel of the tab is built."""

    def __init__(self, actions: TabActions) -> None:
        self._actions, self._context = actions, actions.context
        with gr.Accordion("Export / import", open=False):
            self._crops = gr.Checkbox(value=True, label="Include face crops")
            self._export = gr.Button("Export")
            self._export_status = gr.Markdown(elem_id="export-status")
            self._file = gr.File(label="Exported gallery")
            self._upload = gr.File(label="Gallery file to import", file_types=[".zip"], type="filepath")
            self._import = gr.Button("Import")
            self._import_status = gr.Markdown(elem_id="import-status")
        actions.statuses += [self._export_status, self._import_status]

    def wire(self) -> None:
        password, actions, context = self._context.gate.field, self._actions, self._context
        actions.register(self._export, self.export_gallery, [self._crops, password],
                         [self._file, self._export_status], self._export_status, "export")
        actions.register(self._import, self.import_gallery, [self._upload, password],
                         [self._import_status, actions.details], self._import_status, "import",
                         refused=lambda upload: forget_upload(upload, context.web_cache))

    def export_gallery(self, include_crops=True):
        # Written straight into the web cache (one copy, in a private folder with an unguessable name), and
        # deleted once its link has had time to be used.
        cache = self._context.web_cache
        cache.mkdir(parents=True, exist_ok=True, mode=0o700)
        folder = Path(tempfile.mkdtemp(prefix="export-", dir=cache))
        path = folder / "facerec-gallery.zip"
        count = self._context.gallery.export(path, include_crops=bool(include_crops))
        delete_later(folder, EXPORT_LIFETIME_S)
        return {self._file: str(path), self._export_status: f"Exported {plural(count, 'face')}. The download link "
                                                            f"works for {EXPORT_LIFETIME_S // 60} minutes."}

    def import_gallery(self, upload):
        try:
            if not upload:
                raise InvalidArgument("choose an exported .zip file first")
            counts = self._context.gallery.import_(upload)
        finally:  # imported or refused, the archive leaves the web cache
            forget_upload(upload, self._context.web_cache)
        return {self._import_status: f"Imported {counts['added']} face(s); {counts['skipped']} already present.",
                self._actions.details: counts}
