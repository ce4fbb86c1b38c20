"""Gallery: who is enrolled, and rename, delete, add a photo, their templates, export, import.

The people list is never stale: it is read again whenever the tab opens, when a search or the password is
entered, and after every change made on the page, in any tab (`AppContext.changes_people`). Each action's result
appears under its own button and replaces the previous one (and the other actions' results, so only the latest
stays).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import gradio as gr

from facerec.ui.actions import expose, page_door
from facerec.ui.context import AppContext
from facerec.ui.manage_panels import AddPhotoPanel, DeletePanel, RegroupPanel, RenamePanel
from facerec.ui.cameras_panel import build as cameras_panel_build
from facerec.ui.library_panel import build as library_panel_build
from facerec.ui.suggestions_panel import build as suggestions_panel_build
from facerec.ui.tab_actions import TabActions
from facerec.ui.templates_panel import build as templates_panel_build
from facerec.ui.text import markdown_text
from facerec.ui.transfer_panel import TransferPanel
from facerec.ui.views import FACES_CSS, PEOPLE_TABLE_HEAD, PEOPLE_TABLE_WIDTHS, face_tiles
from facerec.words.people import faces_text
from facerec.words.phrasing import plural

THUMBNAILS_SHOWN = 60
# Every event that writes the people list runs in one queue, one at a time, in the order it was sent: a listing the
# tab started on opening (the whole list) once landed after the search typed just after it and replaced the
# search's answer (the clean-clone browser test saw the whole list stay for a minute). In order, the last one sent
# is the last one shown. A listing takes milliseconds, so the queue costs nothing a person can feel.
PEOPLE_LIST_QUEUE = {"concurrency_id": "people-list", "concurrency_limit": 1}


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
    with gr.Tab("Gallery", id="gallery") as tab:
        actions = TabActions(context, gr.State(False), None)
        search = gr.Textbox(label="Search by name (press Enter)", value="")
        status = gr.Markdown(elem_id="people-status")
        # Wrapping cells and shares of the width, not each column's natural width: on a phone (390 px) the last
        # columns were cut off behind a sideways scroll (#51 item 4; `PEOPLE_TABLE_HEAD`).
        table = gr.Dataframe(headers=["id", "name", "photos", "learned", "enrolled"],
                             label="People (click a row to pick the person for Rename, Delete and Add a photo)",
                             interactive=False, elem_id="people-table", wrap=True, column_widths=PEOPLE_TABLE_WIDTHS)
        thumbnails = gr.HTML(css_template=FACES_CSS, elem_id="people-faces", head=PEOPLE_TABLE_HEAD)
        people_json = gr.JSON(visible=False)
        rename, delete, regroup, add = (RenamePanel(actions), DeletePanel(actions), RegroupPanel(actions),
                                        AddPhotoPanel(actions))
        templates = templates_panel_build(context)
        suggestions_panel_build(context)
        library_panel_build(context)
        cameras_panel_build(context)
        transfer = TransferPanel(actions)
        actions.details = gr.JSON(visible=False)
    views = PeopleViews(context, table, thumbnails, people_json, status)
    name_boxes = [rename.name_box, delete.name_box, add.name_box, templates.name, regroup.name_box]
    table.select(views.picked(name_boxes), None, name_boxes, api_visibility="private")
    password = context.gate.field
    people = PeopleList(search, views.outputs, *context.gate.guarded(views.refresh, [actions.ok, search, password],
                                                                     skip=views.unchanged))
    # One listener for the three triggers: with Gradio's default trigger mode ("once") a search submitted while the
    # tab's own listing was still pending was dropped by the page, and the whole list stayed (the clean-clone
    # browser test, twice); "always_last" runs the last trigger once the pending one is done.
    expose([tab.select, search.submit, password.submit], views.list_people, [search, password], views.outputs[:-1],
           status, api_name="list", admin=context.gate, ask=views.ask_for_password, trigger_mode="always_last",
           **PEOPLE_LIST_QUEUE)
    for panel in (rename, regroup, add, transfer):
        panel.wire()
    delete.wire([rename.name_box, add.name_box, regroup.name_box])
    return tab, people


class PeopleViews:
    """The people table, their thumbnails and the list's line: what each listing answers."""

    def __init__(self, context: AppContext, table, thumbnails, people_json, status) -> None:
        self._context, self._services = context, context.gallery.services()
        self._table, self._thumbnails, self._json, self._status = table, thumbnails, people_json, status
        self.outputs = [table, thumbnails, people_json, status]

    def list_people(self, query=""):
        people = self._context.gallery.people(query or None)
        rows = [[p.id, p.name, p.photos - p.learned, p.learned, p.created_at.strftime("%Y-%m-%d")]
                for p in people]
        tiles = [(self._services.directory.face_crop(p.face_ids[0]) if p.face_ids else None,
                  f"{p.name} ({faces_text(p.photos, p.learned)})") for p in people[:THUMBNAILS_SHOWN]]
        total = self._services.directory.count()
        if not total:
            summary = "Nobody is enrolled yet: enroll someone in the Enroll tab."
        elif query:
            summary = (f"{len(people):,} of {plural(total, 'person', 'people')} "
                       f"match{'es' if len(people) == 1 else ''} '{markdown_text(query)}'.")
        else:
            summary = f"{plural(total, 'person', 'people')} enrolled."
        if len(people) > THUMBNAILS_SHOWN:
            summary += f" Faces of the first {THUMBNAILS_SHOWN} are shown."
        return {self._table: rows, self._thumbnails: face_tiles(tiles), self._json: [p.to_dict() for p in people],
                self._status: summary}

    def ask_for_password(self, _query=""):  # not an error: nobody has tried anything yet
        return {self._table: None, self._thumbnails: "", self._json: None,
                self._status: "Type the admin password at the top of the page and press Enter to see the "
                              "enrolled people."}

    def refresh(self, succeeded, query=""):
        return self.list_people(query)

    def unchanged(self, succeeded, _query=""):
        """After a change that failed: the list as it is (nothing changed, and no second check of a password
        that may be wrong)."""
        return None if succeeded else {component: gr.update() for component in self.outputs}

    @staticmethod
    def picked(name_boxes: list):
        """A click on a row of the people table: that person's name in every name box (Rename, Delete, Add a photo,
        Templates, Merge), so no name is typed by hand (#31 item 7). The name comes from the clicked row the page
        shows (read with the password); the page sends that row only, not the whole list (a body the server
        bounds: `facerec.web.body_limit`)."""
        def picked(event: gr.SelectData):
            row = event.row_value
            if not isinstance(row, (list, tuple)) or len(row) < 2 or not isinstance(row[1], str) or not row[1]:
                return {box: gr.update() for box in name_boxes}
            return {box: row[1] for box in name_boxes}
        return picked
