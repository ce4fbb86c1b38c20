"""The Gallery tab's photo library panel (#66): the library the operator set (FACEREC_LIBRARY) grouped into people
on the admin's word, its groups of people not enrolled shown a page at a time, each with its faces cut from its
photos; naming a group enrolls the person from its best faces, adding it gives them to an enrolled person (a group
of their missed photos), dismissing it hides it. Behind the admin password, like the rest of the tab; the run itself
is `facerec identify LIBRARY/ --group` in a child process (`facerec.library.app_runs`)."""

from __future__ import annotations

import time

import gradio as gr

from facerec.errors import InvalidArgument
from facerec.library.app_runs import LibraryRuns
from facerec.ui.actions import expose
from facerec.ui.context import AppContext
from facerec.ui.text import markdown_text, number_picked, page_number
from facerec.ui.views import FACES_CSS, face_tiles
from facerec.words.phrasing import plural

PAGE_SIZE = 20  # groups a page shows


def build(context: AppContext) -> None:
    """The panel, admin-only (`context.gate`)."""
    LibraryPanel(context)


class LibraryPanel:
    """The accordion and its actions: group the library, list a page of groups, open one, name, add, dismiss."""

    def __init__(self, context: AppContext) -> None:
        self._library = LibraryRuns(context.gallery.services().settings)
        self._gallery = context.gallery
        with gr.Accordion("Photo library: its faces grouped into people", open=False):
            gr.Markdown("The photo library this app was started with (FACEREC_LIBRARY) identified, and the faces of "
                        "people not enrolled grouped by person. Group it (again: only new or changed files are "
                        "read), pick a group, look at its faces, then name the person (they are enrolled from its "
                        "best photos), add it to someone enrolled, or dismiss it.")
            with gr.Row():
                run = gr.Button("Group the library now")
                page = gr.Number(value=1, label="Page", precision=0, minimum=1, elem_id="library-page")
                show = gr.Button("Show groups")
            self._overview = gr.HTML(css_template=FACES_CSS, elem_id="library-groups")
            choice = gr.Dropdown(label="Group", choices=[], value=None, elem_id="library-choice")
            self._faces = gr.HTML(css_template=FACES_CSS, elem_id="library-faces")
            self._name = gr.Textbox(label="Their name", elem_id="library-name")
            with gr.Row():
                name_button = gr.Button("Enroll with this name", variant="primary")
                add_button = gr.Button("Add to this enrolled person")
                dismiss = gr.Button("Dismiss this group", variant="stop")
            self._status = status = gr.Markdown(elem_id="library-status")
            ok = gr.State(False)
        self._choice = choice
        outputs, password, gate = [self._overview, self._faces, status], context.gate.field, context.gate
        expose([run.click], self.started, [page, password], outputs, status, api_name="group_library",
               extra_outputs=[choice], admin=gate)
        expose([show.click, page.submit], self.listed, [page, password], outputs, status, api_name="library_groups",
               extra_outputs=[choice], admin=gate)
        expose([choice.input], self.opened, [choice, password], [self._faces, status], status,
               api_name="library_group_faces", admin=gate)
        for button, new_person, api_name in ((name_button, True, "name_library_group"),
                                             (add_button, False, "add_library_group")):
            taking = expose([button.click], self._taking(new_person), [choice, self._name, page, password], outputs,
                            status, api_name=api_name, extra_outputs=[choice, self._name], ok=ok, admin=gate)
            context.changes_people(taking, ok)  # the person's photos show in the people table at once
        expose([dismiss.click], self.dismissed, [choice, page, password], outputs, status,
               api_name="dismiss_library_group", extra_outputs=[choice], admin=gate)

    def started(self, number=1):
        self._library.start()
        shown = self.listed(number)
        shown[self._status] = "Grouping the library: press Show groups to follow it. " + shown[self._status]
        return shown

    def listed(self, number=1):
        status = self._library.status()
        if not status["on"]:
            return {self._overview: "", self._choice: gr.update(choices=[], value=None), self._faces: "",
                    self._status: f"No library here: {markdown_text(status['off_because'])}."}
        groups = self._library.groups.shown()
        start = PAGE_SIZE * (page_number(number) - 1)
        found = groups[start:start + PAGE_SIZE]
        captions = [_caption(n, g) for n, g in found]
        line = _run_line(status) + " " + plural(len(groups), "group") + " of people not enrolled"
        if not groups:
            line += "."
        elif not found:
            line += f": page {page_number(number)} is past the last page."
        else:
            line += (f", {start + 1}-{start + len(found)} shown. Pick one to see its faces." if len(found) < len(groups)
                     else ". Pick one to see its faces.")
        covers = self._library.groups.covers([n for n, _g in found])
        return {self._overview: face_tiles([(covers[n], caption) for (n, _g), caption in zip(found, captions)]),
                self._choice: gr.update(choices=captions, value=None), self._faces: "", self._status: line}

    def opened(self, picked):
        number = _number_of(picked)
        pictures = self._library.groups.pictures(number)
        return {self._faces: face_tiles([(picture, face["photo"]) for face, picture in pictures]),
                self._status: f"Group {number}: type their name to enroll them (or an enrolled person's, to add "
                              "these photos to them), or dismiss it."}

    def _taking(self, new_person: bool):
        def taken(picked, new_name, number=1):
            group = _number_of(picked)
            outcomes = self._library.groups.take(self._gallery, group, new_name, new_person)
            took = [o for o in outcomes if o["outcome"] in ("enrolled", "added")]
            refused = [f"{o['photo']}: {o['outcome']}" for o in outcomes if o not in took]
            if not took:
                raise InvalidArgument(f"group {group}: no photo was taken ({'; '.join(refused)})")
            what = "Enrolled" if new_person else "Added to"
            line = f"{what} **{markdown_text(new_name)}**: {plural(len(took), 'photo')} from group {group}. "
            shown = self.listed(number)
            if refused:
                line += "Refused: " + markdown_text("; ".join(refused)) + ". "
            shown[self._status] = line + shown[self._status]
            shown[self._name] = ""  # taken: the box is ready for the next group
            return shown
        taken.__name__ = "name_library_group" if new_person else "add_library_group"
        return taken

    def dismissed(self, picked, number=1):
        group = _number_of(picked)
        self._library.groups.dismiss(group)
        shown = self.listed(number)
        shown[self._status] = f"Group {group} dismissed. " + shown[self._status]
        return shown


def _run_line(status: dict) -> str:
    if status["running"]:
        files = f" of {status['files']:,}" if status["files"] else ""
        return f"Grouping under way: {status['answered']:,}{files} files answered; the groups below are the last run's."
    if status["problem"]:
        return f"The last run stopped: {markdown_text(status['problem'])}."
    if status["finished_at"]:
        return (f"Last grouped {time.strftime('%Y-%m-%d %H:%M', time.localtime(status['finished_at']))} "
                f"({status['files']:,} files).")
    return "Not grouped yet: press Group the library now."


def _caption(number: int, group: dict) -> str:
    """'group 7 · 5 faces in 4 photos' (the number first: the actions read it), with the closest enrolled person
    when there is one (a hint: the group may be their missed photos)."""
    caption = f"group {number} · {plural(len(group['faces']), 'face')} in {plural(group['photos'], 'photo')}"
    closest = group.get("closest_enrolled")
    return caption + (f" · closest enrolled: {closest[0]}" if closest else "")


def _number_of(picked) -> int:
    return number_picked(picked, "group", "Show groups")
