"""The rows under an identification that tell the gallery whether it was right, one panel for a photo's faces and a
video's tracks: pick one, then Confirm, Correct (who it really is), Nobody enrolled or Not this person.

What identify saw is kept in the page's session as one `Seen` per face or track (admin only, never sent to the
browser). A face kept as a sighting is answered through that sighting (`SightingsFeedback.confirm`, `correct`,
`reject`, `not_this_person`); one that was not kept (unknown, or past the pace of sightings) through its
embedding (`label`, `not_this_face`) with its aligned face: from the photo the page keeps, or a track's best
view, since a video keeps no photo. A confirmation or correction may teach the gallery a template, so every action
refreshes the Gallery tab (`AppContext.changes_people`)."""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr
import numpy as np

from facerec.errors import InvalidArgument
from facerec.faces.detect import DetectedFace
from facerec.ui.actions import expose
from facerec.ui.context import AppContext
from facerec.ui.text import markdown_text
from facerec.words.feedback import Unit

MAX_NAMES = 1000  # names offered for a correction (any enrolled name may be typed)


@dataclass
class Seen:
    """One face or track of the last identification, as its feedback needs it."""
    sighting_id: int | None  # the sighting it was kept as; None when not kept (or no longer)
    embedding: np.ndarray  # a face's [512], or a track's pooled embedding
    name: str | None  # the name it was given; None: unknown
    face: DetectedFace | None  # where it is in the photo, or a track's best view
    crop: np.ndarray | None = None  # a track's best aligned face (a photo's is aligned again from the kept photo)


@dataclass(frozen=True)
class PanelIds:
    """The elements' ids, which the page's tests and its CSS name."""
    choice: str
    name: str
    confirm: str
    correct: str
    reject: str
    not_this: str
    status: str


class FeedbackPanel:
    """The feedback rows, built where it is created. `offer` fills them after an identification; `outputs` are the
    components that identification must list among its outputs for `offer`'s updates."""

    def __init__(self, context: AppContext, unit: Unit, ids: PanelIds, kept: gr.State | None = None) -> None:
        self._context, self._unit, self._kept = context, unit, kept
        self._feedback = context.gallery.services().feedback
        self.seen = gr.State(None)  # list[Seen] of the last identification (admin only)
        learned = gr.State(False)  # whether the last action went through
        with gr.Row():
            self.choice = gr.Dropdown(label=unit.unit.capitalize(), choices=[], value=None, elem_id=ids.choice)
            self.names = gr.Dropdown(label="Who it really is (for Correct)", choices=[], value=None,
                                     allow_custom_value=True, elem_id=ids.name)
        with gr.Row():
            buttons = {action: gr.Button(label, elem_id=getattr(ids, action))
                       for action, label in (("confirm", "Confirm"), ("correct", "Correct"),
                                             ("reject", "Nobody enrolled"), ("not_this", "Not this person"))}
        self.status = gr.Markdown(elem_id=ids.status)
        photo = [kept] if kept is not None else []
        actions = {"confirm": (self.confirm, [self.choice, self.seen, *photo]),
                   # `seen` stays as it is when a correction fails (a mistyped name must not forget the faces)
                   "correct": (self.correct, [self.choice, self.names, self.seen, *photo]),
                   "reject": (self.reject, [self.choice, self.seen]),
                   "not_this": (self.not_this, [self.choice, self.seen])}
        for action, (function, inputs) in actions.items():  # admin-only, each (the password field added last)
            event = expose([buttons[action].click], function, inputs, [], self.status, extra_outputs=[self.seen],
                           ok=learned, admin=context.gate)
            context.changes_people(event, learned)  # each may learn or undo a template: the Gallery tab follows

    @property
    def outputs(self) -> list:
        return [self.choice, self.names]

    def offer(self, seen: list[Seen] | None, labels: list[str]) -> dict:
        """The rows after an identification: `seen` (None without the admin password) and each one's label."""
        admin = seen is not None
        names = [person.name for person in self._context.gallery.people()[:MAX_NAMES]] if admin else []
        return {self.seen: seen,
                self.choice: gr.update(choices=labels if admin else [], value=labels[0] if admin and labels else None),
                self.names: gr.update(choices=names, value=None)}

    # ----- the four actions -----------------------------------------------------------------------------------
    def confirm(self, choice, seen, answered=None):
        index, one = self._chosen(choice, seen)
        if one.sighting_id is None and one.name is None:
            raise InvalidArgument(self._unit.nothing_to_confirm(index))
        if one.sighting_id is None:  # named, but not kept (past the pace of automatic sightings): kept, confirmed
            info = self._feedback.label(one.embedding, one.name, confirmed=True, learn_by=self._learner(),
                                        **self._aligned(one, answered))
        else:
            info = self._feedback.confirm(one.sighting_id, learn_by=self._learner())
        one.sighting_id = info.id
        return {self.seen: seen, self.status: self._unit.confirmed(index, markdown_text(info.name), info.learning)}

    def correct(self, choice, name, seen, answered=None):
        index, one = self._chosen(choice, seen)
        if not name:
            raise InvalidArgument(self._unit.no_name_picked())
        info = (self._feedback.correct(one.sighting_id, name, learn_by=self._learner()) if one.sighting_id is not None
                else self._feedback.label(one.embedding, name, learn_by=self._learner(),
                                          **self._aligned(one, answered)))
        one.sighting_id = info.id
        # No cosine beside the learning sentence's score threshold: one scale in one answer (#64 row 4)
        return {self.seen: seen, self.status: self._unit.corrected(index, markdown_text(info.name), info.undone,
                                                                   info.learning)}

    def reject(self, choice, seen):
        index, one = self._chosen(choice, seen)
        if one.sighting_id is None:
            raise InvalidArgument(self._unit.nothing_to_forget(index))
        info = self._feedback.reject(one.sighting_id)
        one.sighting_id = None
        return {self.seen: seen, self.status: self._unit.rejected(index, markdown_text(info.name), info.undone)}

    def not_this(self, choice, seen):
        index, one = self._chosen(choice, seen)
        if one.sighting_id is not None:
            info = self._feedback.not_this_person(one.sighting_id, self._learner())
            name, negative = info.name, info.negative_id
        elif one.name is not None:
            name = one.name
            negative = self._feedback.not_this_face(one.embedding, name, self._learner(), crop=one.crop)
        else:
            raise InvalidArgument(self._unit.nobody_to_deny(index))
        one.sighting_id = None
        return {self.seen: seen, self.status: self._unit.denied(index, markdown_text(name), negative)}

    # ----- shared by them -------------------------------------------------------------------------------------
    def _chosen(self, choice, seen: list[Seen] | None) -> tuple[int, Seen]:
        if not seen or not choice:
            raise InvalidArgument(self._unit.nothing_identified())
        index = int(str(choice).split()[0].lstrip("#"))
        return index, seen[index]

    def _learner(self) -> str:
        """Who answers on this page: the admin (password checked by the gate), or whoever runs the app."""
        return "admin password" if self._context.password_needed else "the page (no admin password set)"

    @staticmethod
    def _aligned(one: Seen, answered) -> dict:
        """Where the aligned face comes from, so it can be kept and learned: a track's best view, or the face in
        the photo the page keeps in memory (nothing when the page no longer keeps it)."""
        if one.crop is not None:
            return {"face": one.face, "crop": one.crop}
        photo = getattr(answered, "photo", None)
        return {"photo": photo, "face": one.face} if photo is not None and one.face is not None else {}
