"""Gallery: who is enrolled, and rename, delete, add a photo, their templates, export, import.

The people list is never stale: it is read again whenever the tab opens, when a search or the password is
entered, and after every change made on the page, in any tab (`AppContext.changes_people`). Each action's result
appears under its own button and replaces the previous one (and the other actions' results, so only the latest
stays).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import gradio as gr

from facerec.errors import IdentityMismatch, InvalidArgument, LowQuality, MultipleFaces
from facerec.words.phrasing import plural
from facerec.ui.suggestions_panel import build as suggestions_panel_build
from facerec.ui.templates_panel import build as templates_panel_build
from facerec.ui.actions import NEW_UPLOAD, expose, page_door
from facerec.ui.context import AppContext
from facerec.ui.text import markdown_text
from facerec.ui.uploads import (EXPORT_LIFETIME_S, delete_later, empty_web_cache, forget_upload,
                                photo_input, photo_to_answer, received_photo)
from facerec.ui.views import FACES_CSS, PEOPLE_TABLE_HEAD, PEOPLE_TABLE_WIDTHS, face_tiles
from facerec.words.people import faces_text

THUMBNAILS_SHOWN = 60
# Every event that writes the people list runs in one queue, one at a time, in the order it was sent: a listing the
# tab started on opening (the whole list) once landed after the search typed just after it and replaced the
# search's answer (the clean-clone browser test saw the whole list stay for a minute). In order, the last one sent
# is the last one shown. A listing takes milliseconds, so the queue costs nothing a person can feel.
PEOPLE_LIST_QUEUE = {"concurrency_id": "people-list", "concurrency_limit": 1}
DELETE_BOX = "Yes, delete this person and all their photos"
MISMATCH_BOX = "Add anyway if the face does not match this person"
REGROUP_BOX = "Merge or move anyway if the faces do not match"
ADD_LOW_QUALITY_BOX = "Add anyway if the photo is a poor photo to recognise them by"


@dataclass
class PeopleList:
    """The list's inputs and outputs, and how to refresh it after a change (`refresh_after`)."""

    search: gr.Textbox
    outputs: list  # the list's views, its status line last
    refresh: Callable  # (ok, query, password, request) -> updates, behind the gate; nothing unless ok
    inputs: list  # the refresh's: ok, the search box and the password field

    def refresh_after(self, event, ok: gr.State) -> None:
        """After `event` (which wrote `ok`), show the list again if it succeeded, with the password it used."""
        event.then(page_door(self.refresh, self.outputs[:-1], self.outputs[-1]), [ok, *self.inputs[1:]],
                   self.outputs, api_visibility="private", **PEOPLE_LIST_QUEUE)


def build(context: AppContext) -> tuple[gr.Tab, PeopleList]:
    """The Gallery tab, admin-only (`context.gate`; Enter in the password field shows the people)."""
    gallery = context.gallery
    services = gallery.services()  # what the verbs do not offer
    with gr.Tab("Gallery", id="gallery") as tab:
        add_kept = context.kept_state()  # the photo chosen for Add photo, decoded, in memory
        ok = gr.State(False)
        search = gr.Textbox(label="Search by name (press Enter)", value="")
        people_status = gr.Markdown(elem_id="people-status")
        # Wrapping cells and shares of the width, not each column's natural width: on a phone (390 px) the last
        # columns were cut off behind a sideways scroll (#51 item 4; `PEOPLE_TABLE_HEAD`).
        table = gr.Dataframe(headers=["id", "name", "photos", "learned", "enrolled"], label="People (click a row to pick the "
                             "person for Rename, Delete and Add a photo)", interactive=False, elem_id="people-table",
                             wrap=True, column_widths=PEOPLE_TABLE_WIDTHS)
        thumbnails = gr.HTML(css_template=FACES_CSS, elem_id="people-faces", head=PEOPLE_TABLE_HEAD)
        people_json = gr.JSON(visible=False)
        with gr.Accordion("Rename", open=False):
            rename_from = gr.Textbox(label="Current name", elem_id="rename-from")
            rename_to = gr.Textbox(label="New name", elem_id="rename-to")
            rename_button = gr.Button("Rename")
            rename_status = gr.Markdown(elem_id="rename-status")
        with gr.Accordion("Delete", open=False):
            delete_name = gr.Textbox(label="Name", elem_id="delete-name")
            delete_confirm = gr.Checkbox(label=DELETE_BOX)
            delete_button = gr.Button("Delete", variant="stop")
            delete_status = gr.Markdown(elem_id="delete-status")
        with gr.Accordion("Merge two people, or move one face", open=False):
            gr.Markdown("One person enrolled twice: every face, sighting and negative example of the first becomes "
                        "the second's. A face in the wrong person (its id: *Faces of a person* below): to another "
                        "person, or to a new one. Export first to be able to undo.")
            with gr.Row():
                merge_from = gr.Textbox(label="Merge this person", elem_id="merge-from")
                merge_into = gr.Textbox(label="into this one", elem_id="merge-into")
            with gr.Row():
                move_face_id = gr.Number(label="Face id to move", precision=0, elem_id="move-face-id")
                move_to = gr.Textbox(label="to this person, or a new name", elem_id="move-to")
            regroup_force = gr.Checkbox(label=REGROUP_BOX)
            with gr.Row():
                merge_button = gr.Button("Merge")
                move_button = gr.Button("Move face")
            regroup_status = gr.Markdown(elem_id="regroup-status")
        with gr.Accordion("Add a photo to a person", open=False):
            add_name = gr.Textbox(label="Name", elem_id="add-photo-name")
            add_image = photo_input("Photo", services.settings.max_upload_bytes)
            add_anyway = gr.Checkbox(label=MISMATCH_BOX)
            add_low_quality = gr.Checkbox(label=ADD_LOW_QUALITY_BOX)
            add_button = gr.Button("Add photo")
            add_status = gr.Markdown(elem_id="add-photo-status")
        templates = templates_panel_build(context)
        suggestions_panel_build(context)
        with gr.Accordion("Export / import", open=False):
            export_crops = gr.Checkbox(value=True, label="Include face crops")
            export_button = gr.Button("Export")
            export_status = gr.Markdown(elem_id="export-status")
            export_file = gr.File(label="Exported gallery")
            import_file = gr.File(label="Gallery file to import", file_types=[".zip"], type="filepath")
            import_button = gr.Button("Import")
            import_status = gr.Markdown(elem_id="import-status")
        manage_json = gr.JSON(visible=False)
    statuses = [rename_status, delete_status, add_status, export_status, import_status, regroup_status]

    def list_people(query=""):
        people = gallery.people(query or None)
        rows = [[p.id, p.name, p.photos - p.learned, p.learned, p.created_at.strftime("%Y-%m-%d")]
                for p in people]
        tiles = [(services.directory.face_crop(p.face_ids[0]) if p.face_ids else None,
                  f"{p.name} ({faces_text(p.photos, p.learned)})") for p in people[:THUMBNAILS_SHOWN]]
        total = services.directory.count()
        if not total:
            summary = "Nobody is enrolled yet: enroll someone in the Enroll tab."
        elif query:
            summary = (f"{len(people):,} of {plural(total, 'person', 'people')} "
                       f"match{'es' if len(people) == 1 else ''} '{markdown_text(query)}'.")
        else:
            summary = f"{plural(total, 'person', 'people')} enrolled."
        if len(people) > THUMBNAILS_SHOWN:
            summary += f" Faces of the first {THUMBNAILS_SHOWN} are shown."
        return {table: rows, thumbnails: face_tiles(tiles), people_json: [p.to_dict() for p in people],
                people_status: summary}

    def ask_for_password(_query=""):  # not an error: nobody has tried anything yet
        return {table: None, thumbnails: "", people_json: None,
                people_status: "Type the admin password at the top of the page and press Enter to see the "
                               "enrolled people."}

    def refresh(succeeded, query=""):
        return list_people(query)

    def unchanged(succeeded, _query=""):
        """After a change that failed: the list as it is (nothing changed, and no second check of a password
        that may be wrong)."""
        return None if succeeded else {component: gr.update() for component in
                                       (table, thumbnails, people_json, people_status)}

    def rename(name, new_name):
        info = gallery.rename(name, new_name)
        # the boxes follow the new state: the person is now called the new name (#64 row 7)
        return {rename_status: f"Renamed to **{markdown_text(info.name)}**.", manage_json: info.to_dict(),
                rename_from: info.name, rename_to: ""}

    def merge(source, target, force=False):
        done = gallery.merge(source, target, force=bool(force))
        return {regroup_status: f"Merged **{markdown_text(done.removed_person)}** into **{markdown_text(done.name)}**"
                                f" ({len(done.moved)} face(s) moved, {len(done.duplicates)} duplicate(s) dropped).",
                manage_json: done.to_dict(), regroup_force: False}

    def move(face_id, to, force=False):
        if face_id is None or not str(to or "").strip():
            raise InvalidArgument("give the face's id and who it goes to (an enrolled name, or a new one)")
        known = {person.name for person in gallery.people(str(to).strip())}
        target = str(to).strip()
        done = gallery.move_face(int(face_id), **({"to": target} if target in known else {"new_name": target}),
                                 force=bool(force))
        return {regroup_status: f"Face {int(face_id)} is now **{markdown_text(done.name)}**'s.",
                manage_json: done.to_dict(), regroup_force: False}

    def delete(name, confirmed=False):
        if not confirmed:
            raise InvalidArgument(f"nothing was deleted: tick '{DELETE_BOX.lower()}' to confirm")
        info = gallery.delete(name)
        empty_web_cache(context.app, context.web_cache)  # nothing of theirs stays downloadable: uploads, exports
        return {delete_status: f"Deleted **{markdown_text(info.name)}** ({faces_text(info.photos, info.learned)}).",
                manage_json: info.to_dict(), delete_confirm: False, delete_name: "", rename_from: "", add_name: "",
                merge_from: ""}

    def received(photo):
        """A photo chosen for Add photo: decoded into the page's memory at once, its file deleted (a refusal then
        asks again about the same photo without another upload)."""
        return {add_kept: context.keep(received_photo(photo, services.photos.read, context.web_cache))}

    def add_photo(name, photo, allow_mismatch=False, allow_low_quality=False, answered=None):
        try:
            answered = photo_to_answer(photo, answered, services.photos.read)
            result = gallery.add_photo(name, answered.photo, allow_mismatch=bool(allow_mismatch),
                                       allow_low_quality=bool(allow_low_quality))
        finally:
            forget_upload(photo, context.web_cache)
        return {add_kept: None,
                add_status: f"Added a photo to **{markdown_text(result.name)}** "
                            f"({faces_text(result.photos, result.learned)}).",
                manage_json: result.to_dict(), add_image: None, add_anyway: False, add_low_quality: False}

    def export_gallery(include_crops=True):
        # Written straight into the web cache (one copy, in a private folder with an unguessable name), and
        # deleted once its link has had time to be used.
        context.web_cache.mkdir(parents=True, exist_ok=True, mode=0o700)
        folder = Path(tempfile.mkdtemp(prefix="export-", dir=context.web_cache))
        path = folder / "facerec-gallery.zip"
        count = gallery.export(path, include_crops=bool(include_crops))
        delete_later(folder, EXPORT_LIFETIME_S)
        return {export_file: str(path), export_status: f"Exported {plural(count, 'face')}. The download link "
                                                       f"works for {EXPORT_LIFETIME_S // 60} minutes."}

    def import_gallery(upload):
        try:
            if not upload:
                raise InvalidArgument("choose an exported .zip file first")
            counts = gallery.import_(upload)
        finally:  # imported or refused, the archive leaves the web cache
            forget_upload(upload, context.web_cache)
        return {import_status: f"Imported {counts['added']} face(s); {counts['skipped']} already present.",
                manage_json: counts}

    def picked(event: gr.SelectData):
        """A click on a row of the people table: that person's name in Rename, Delete and Add a photo, so no name
        is typed by hand (#31 item 7). The name comes from the clicked row the page shows (read with the password);
        the page sends that row only, not the whole list (a body the server bounds: `facerec.web.body_limit`)."""
        row = event.row_value
        if not isinstance(row, (list, tuple)) or len(row) < 2 or not isinstance(row[1], str) or not row[1]:
            return {rename_from: gr.update(), delete_name: gr.update(), add_name: gr.update(),
                    templates.name: gr.update(), merge_from: gr.update()}
        name = row[1]
        return {rename_from: name, delete_name: name, add_name: name, templates.name: name, merge_from: name}

    table.select(picked, None, [rename_from, delete_name, add_name, templates.name, merge_from],
                 api_visibility="private")
    password = context.gate.field
    people = PeopleList(search, [table, thumbnails, people_json, people_status],
                        *context.gate.guarded(refresh, [ok, search, password], skip=unchanged))
    # One listener for the three triggers: with Gradio's default trigger mode ("once") a search submitted while the
    # tab's own listing was still pending was dropped by the page, and the whole list stayed (the clean-clone
    # browser test, twice); "always_last" runs the last trigger once the pending one is done.
    expose([tab.select, search.submit, password.submit], list_people, [search, password],
           [table, thumbnails, people_json], people_status, api_name="list", admin=context.gate, ask=ask_for_password,
           trigger_mode="always_last", **PEOPLE_LIST_QUEUE)

    def action(button, core, inputs, outputs, status, api_name, **options):
        """An admin action of this tab: its result beside its button, the other results cleared (`options`: the
        page's extra outputs, hints and what to delete when refused, as `expose` takes them)."""
        event = expose([button.click], core, inputs, outputs, status, api_name=api_name, admin=context.gate,
                       also_clear=[s for s in statuses if s is not status], ok=ok, **options)
        context.changes_people(event, ok)

    action(rename_button, rename, [rename_from, rename_to, password], [rename_status, manage_json], rename_status,
           "rename", extra_outputs=[rename_from, rename_to])
    action(merge_button, merge, [merge_from, merge_into, regroup_force, password], [regroup_status, manage_json],
           regroup_status, "merge", extra_outputs=[regroup_force])
    action(move_button, move, [move_face_id, move_to, regroup_force, password], [regroup_status, manage_json],
           regroup_status, "move_face", extra_outputs=[regroup_force])
    action(delete_button, delete, [delete_name, delete_confirm, password], [delete_status, manage_json],
           delete_status, "delete", extra_outputs=[delete_confirm, delete_name, rename_from, add_name, merge_from])
    gr.on([add_image.input], page_door(received, [add_kept], add_status), [add_image], [add_kept, add_status],
          api_visibility="private", **NEW_UPLOAD)
    action(add_button, add_photo, [add_name, add_image, password, add_anyway, add_low_quality, add_kept],
           [add_status, manage_json], add_status, "add_photo", refused=lambda _name, photo, *_: forget_upload(
               photo, context.web_cache),
           extra_outputs=[add_image, add_anyway, add_low_quality, add_kept],
           page_hints={IdentityMismatch: f"If you are sure it is them, tick '{MISMATCH_BOX}' and press Add photo "
                                         "again.",
                       LowQuality: f"To add it anyway, tick '{ADD_LOW_QUALITY_BOX}' and press Add photo again.",
                       MultipleFaces: "Use a photo that shows only this person."},
           api_hints={IdentityMismatch: "If you are sure it is them, call again with allow_mismatch=True.",
                      LowQuality: "To add it anyway, call again with allow_low_quality=True.",
                      MultipleFaces: "Use a photo that shows only this person."})
    action(export_button, export_gallery, [export_crops, password], [export_file, export_status], export_status,
           "export")
    action(import_button, import_gallery, [import_file, password], [import_status, manage_json], import_status,
           "import", refused=lambda upload: forget_upload(upload, context.web_cache))
    return tab, people
