"""What a confirmation taught the gallery, and what a rejection or correction undid, in one sentence for every
interface."""

from __future__ import annotations


def learning_sentence(learning: dict | None) -> str:
    """" Learned as ..." / " Not learned ...: why." for a confirmation's `learning` (empty when none was asked)."""
    if not learning:
        return ""
    if learning.get("learned_face_id"):
        replaced = learning.get("replaced_face_id")
        return (f" Learned as a template of this person (face {learning['learned_face_id']})"
                + (f", in place of the learned face {replaced} most like their others" if replaced else "") + ".")
    return f" Not learned as a template: {learning.get('not_learned_because')}."


def undo_sentence(undone: dict | None) -> str:
    """" Its template (face 12) was removed; face 7, which it had replaced, is a template again." for a rejection's
    or correction's `undone` (empty when nothing was learned from the face)."""
    if not undone or not undone.get("removed_face_ids"):
        return ""
    removed = ", ".join(str(face) for face in undone["removed_face_ids"])
    restored = ", ".join(str(face) for face in undone.get("restored_face_ids") or [])
    return (f" The template learned from it (face {removed}) was removed"
            + (f"; face {restored}, which it had replaced, is a template again" if restored else "") + ".")
