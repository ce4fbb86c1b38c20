"""The sentences of the feedback rows under an identification, for a photo's faces and a video's tracks alike: what
Confirm, Correct, Nobody enrolled and Not this person did, and why one could not be done. `Seen` names what is
answered about ("face" in a "photo", "track" in a "video")."""

from __future__ import annotations

from dataclasses import dataclass

from facerec.words.templates import learning_sentence, not_this_sentence, undo_sentence


@dataclass(frozen=True)
class Unit:
    """What a feedback row is about: `unit` ("face", "track") found in a `medium` ("photo", "video"); `whose_face`
    is how the face of one is named in a sentence ("the face", "the track's face")."""
    unit: str
    medium: str
    whose_face: str

    def title(self, index: int) -> str:
        return f"{self.unit.capitalize()} #{index}"

    # ----- what was done ------------------------------------------------------------------------------------
    def confirmed(self, index: int, shown_name: str, learning: dict | None) -> str:
        return f"Confirmed {self.unit} #{index} as **{shown_name}**." + learning_sentence(learning)

    def corrected(self, index: int, shown_name: str, undone: dict | None, learning: dict | None) -> str:
        return (f"{self.title(index)} is **{shown_name}**; kept as a sighting." + undo_sentence(undone)
                + learning_sentence(learning))

    def rejected(self, index: int, shown_name: str, undone: dict | None) -> str:
        return f"{self.title(index)} is not {shown_name}: forgotten." + undo_sentence(undone)

    def denied(self, index: int, shown_name: str, negative_id: int) -> str:
        return not_this_sentence(self.title(index), shown_name, negative_id)

    # ----- why it could not be done -------------------------------------------------------------------------
    def nothing_identified(self) -> str:
        return f"identify a {self.medium} first (with the admin password), then pick one of its {self.unit}s"

    def nothing_to_confirm(self, index: int) -> str:
        return (f"{self.unit} #{index} was not named, so there is nothing to confirm: pick who it is and press "
                "Correct")

    def no_name_picked(self) -> str:
        return f"pick who {self.whose_face} really is, then press Correct"

    def nothing_to_forget(self, index: int) -> str:
        return f"{self.unit} #{index} was not kept as a sighting: nothing to forget"

    def nobody_to_deny(self, index: int) -> str:
        return f"{self.unit} #{index} was not named: there is nobody it is not"


PHOTO_FACE = Unit("face", "photo", "the face")
VIDEO_TRACK = Unit("track", "video", "the track's face")
