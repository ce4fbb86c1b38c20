"""The Gallery tab's panels that change who is enrolled: rename, delete, merge two people or move one face, and add a
photo to a person. Each builds its accordion where it is created, offers the box a clicked row of the people
table fills (`name_box`), and registers its actions (`wire`) once every panel of the tab is built."""

from __future__ import annotations

import gradio as gr

from facerec.errors import IdentityMismatch, InvalidArgument, LowQuality, MultipleFaces
from facerec.ui.actions import NEW_UPLOAD, page_door
from facerec.ui.tab_actions import TabActions
from facerec.ui.text import markdown_text
from facerec.ui.uploads import empty_web_cache, forget_upload, photo_input, photo_to_answer, received_photo
from facerec.words.people import faces_text

DELETE_BOX = "Yes, delete this person and all their photos"
MISMATCH_BOX = "Add anyway if the face does not match this person"
REGROUP_BOX = "Merge or move anyway if the faces do not match"
ADD_LOW_QUALITY_BOX = "Add anyway if the photo is a poor photo to recognise them by"


class RenamePanel:
    def __init__(self, actions: TabActions) -> None:
        self._actions, self._gallery = actions, actions.context.gallery
        with gr.Accordion("Rename", open=False):
            self.name_box = gr.Textbox(label="Current name", elem_id="rename-from")
            self._new_name = gr.Textbox(label="New name", elem_id="rename-to")
            self._button = gr.Button("Rename")
            self._status = gr.Markdown(elem_id="rename-status")
        actions.statuses.append(self._status)

    def wire(self) -> None:
        password = self._actions.context.gate.field
        self._actions.register(self._button, self.rename, [self.name_box, self._new_name, password],
                               [self._status, self._actions.details], self._status, "rename",
                               extra_outputs=[self.name_box, self._new_name])

    def rename(self, name, new_name):
        info = self._gallery.rename(name, new_name)
        # the boxes follow the new state: the person is now called the new name (#64 row 7)
        return {self._status: f"Renamed to **{markdown_text(info.name)}**.", self._actions.details: info.to_dict(),
                self.name_box: info.name, self._new_name: ""}


class DeletePanel:
    def __init__(self, actions: TabActions) -> None:
        self._actions, self._context = actions, actions.context
        with gr.Accordion("Delete", open=False):
            self.name_box = gr.Textbox(label="Name", elem_id="delete-name")
            self._confirm = gr.Checkbox(label=DELETE_BOX)
            self._button = gr.Button("Delete", variant="stop")
            self._status = gr.Markdown(elem_id="delete-status")
        actions.statuses.append(self._status)
        self._other_boxes: list = []

    def wire(self, other_boxes: list) -> None:
        """`other_boxes`: the other panels' name boxes, emptied once the person is gone."""
        self._other_boxes = list(other_boxes)
        self._actions.register(self._button, self.delete, [self.name_box, self._confirm,
                                                           self._context.gate.field],
                               [self._status, self._actions.details], self._status, "delete",
                               extra_outputs=[self._confirm, self.name_box, *self._other_boxes])

    def delete(self, name, confirmed=False):
        if not confirmed:
            raise InvalidArgument(f"nothing was deleted: tick '{DELETE_BOX.lower()}' to confirm")
        info = self._context.gallery.delete(name)
        empty_web_cache(self._context.app, self._context.web_cache)  # nothing of theirs stays downloadable
        return {self._status: f"Deleted **{markdown_text(info.name)}** ({faces_text(info.photos, info.learned)}).",
                self._actions.details: info.to_dict(), self._confirm: False, self.name_box: "",
                **{box: "" for box in self._other_boxes}}


class RegroupPanel:
    def __init__(self, actions: TabActions) -> None:
        self._actions, self._gallery = actions, actions.context.gallery
        with gr.Accordion("Merge two people, or move one face", open=False):
            gr.Markdown("One person enrolled twice: every face, sighting and negative example of the first becomes "
                        "the second's. A face in the wrong person (its id: *Faces of a person* below): to another "
                        "person, or to a new one. Export first to be able to undo.")
            with gr.Row():
                self.name_box = gr.Textbox(label="Merge this person", elem_id="merge-from")
                self._into = gr.Textbox(label="into this one", elem_id="merge-into")
            with gr.Row():
                self._face_id = gr.Number(label="Face id to move", precision=0, elem_id="move-face-id")
                self._to = gr.Textbox(label="to this person, or a new name", elem_id="move-to")
            self._force = gr.Checkbox(label=REGROUP_BOX)
            with gr.Row():
                self._merge = gr.Button("Merge")
                self._move = gr.Button("Move face")
            self._status = gr.Markdown(elem_id="regroup-status")
        actions.statuses.append(self._status)

    def wire(self) -> None:
        password, outputs = self._actions.context.gate.field, [self._status, self._actions.details]
        self._actions.register(self._merge, self.merge, [self.name_box, self._into, self._force, password], outputs,
                               self._status, "merge", extra_outputs=[self._force])
        self._actions.register(self._move, self.move, [self._face_id, self._to, self._force, password], outputs,
                               self._status, "move_face", extra_outputs=[self._force])

    def merge(self, source, target, force=False):
        done = self._gallery.merge(source, target, force=bool(force))
        return {self._status: f"Merged **{markdown_text(done.removed_person)}** into **{markdown_text(done.name)}**"
                              f" ({len(done.moved)} face(s) moved, {len(done.duplicates)} duplicate(s) dropped).",
                self._actions.details: done.to_dict(), self._force: False}

    def move(self, face_id, to, force=False):
        if face_id is None or not str(to or "").strip():
            raise InvalidArgument("give the face's id and who it goes to (an enrolled name, or a new one)")
        target = str(to).strip()
        known = {person.name for person in self._gallery.people(target)}
        done = self._gallery.move_face(int(face_id), **({"to": target} if target in known else {"new_name": target}),
                                       force=bool(force))
        return {self._status: f"Face {int(face_id)} is now **{markdown_text(done.name)}**'s.",
                self._actions.details: done.to_dict(), self._force: False}


class AddPhotoPanel:
    def __init__(self, actions: TabActions) -> None:
        self._actions, self._context = actions, actions.context
        self._services = self._context.gallery.services()
        self._kept = self._context.kept_state()  # the photo chosen, decoded, in memory
        with gr.Accordion("Add a photo to a person", open=False):
            self.name_box = gr.Textbox(label="Name", elem_id="add-photo-name")
            self._image = photo_input("Photo", self._services.settings.max_upload_bytes)
            self._anyway = gr.Checkbox(label=MISMATCH_BOX)
            self._low_quality = gr.Checkbox(label=ADD_LOW_QUALITY_BOX)
            self._button = gr.Button("Add photo")
            self._status = gr.Markdown(elem_id="add-photo-status")
        actions.statuses.append(self._status)

    def wire(self) -> None:
        cache = self._context.web_cache
        gr.on([self._image.input], page_door(self.received, [self._kept], self._status), [self._image],
              [self._kept, self._status], api_visibility="private", **NEW_UPLOAD)
        self._actions.register(
            self._button, self.add_photo, [self.name_box, self._image, self._context.gate.field, self._anyway,
                                           self._low_quality, self._kept],
            [self._status, self._actions.details], self._status, "add_photo",
            refused=lambda _name, photo, *_: forget_upload(photo, cache),
            extra_outputs=[self._image, self._anyway, self._low_quality, self._kept],
            page_hints={IdentityMismatch: f"If you are sure it is them, tick '{MISMATCH_BOX}' and press Add photo "
                                          "again.",
                        LowQuality: f"To add it anyway, tick '{ADD_LOW_QUALITY_BOX}' and press Add photo again.",
                        MultipleFaces: "Use a photo that shows only this person."},
            api_hints={IdentityMismatch: "If you are sure it is them, call again with allow_mismatch=True.",
                       LowQuality: "To add it anyway, call again with allow_low_quality=True.",
                       MultipleFaces: "Use a photo that shows only this person."})

    def received(self, photo):
        """A photo chosen for Add photo: decoded into the page's memory at once, its file deleted (a refusal then
        asks again about the same photo without another upload)."""
        return {self._kept: self._context.keep(received_photo(photo, self._services.photos.read,
                                                              self._context.web_cache))}

    def add_photo(self, name, photo, allow_mismatch=False, allow_low_quality=False, answered=None):
        try:
            answered = photo_to_answer(photo, answered, self._services.photos.read)
            result = self._context.gallery.add_photo(name, answered.photo, allow_mismatch=bool(allow_mismatch),
                                                     allow_low_quality=bool(allow_low_quality))
        finally:
            forget_upload(photo, self._context.web_cache)
        return {self._kept: None,
                self._status: f"Added a photo to **{markdown_text(result.name)}** "
                              f"({faces_text(result.photos, result.learned)}).",
                self._actions.details: result.to_dict(), self._image: None, self._anyway: False,
                self._low_quality: False}
