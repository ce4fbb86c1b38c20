"""What a confirmation taught the gallery, and what a rejection or correction undid, in one sentence for every
interface; and where a template came from, in words."""

from __future__ import annotations

ORIGIN_WORDS = {"enrolled": "enrolled", "added": "added photo", "learned": "learned"}


def origin_text(origin: str, learned_from: int | None = None, learned_by: str | None = None) -> str:
    """Where a template came from: 'enrolled', 'added photo', or 'learned from sighting 5, confirmed on the page
    with no admin password set' (`learned_by` as stored: who confirmed it)."""
    text = ORIGIN_WORDS.get(origin, origin)
    if origin != "learned":
        return text
    text += f" from sighting {learned_from}" if learned_from is not None else ""
    return f"{text}, {confirmed_by(learned_by)}" if learned_by else text


def confirmed_by(learned_by: str) -> str:
    """Who confirmed a learned face, as a clause: the page, the CLI and the REST API store "admin password", "the
    page (no admin password set)", "command line" and "API key 3 (name)"; said as they read in a sentence (the
    stored words were put in parentheses after the sighting, which nested them)."""
    if learned_by == "admin password":
        return "confirmed with the admin password"
    if learned_by == "command line":
        return "confirmed on the command line"
    if learned_by.startswith("the page"):
        return "confirmed on the page with no admin password set"
    if learned_by.startswith("API key"):
        return f"confirmed with {learned_by}"
    return f"confirmed by {learned_by}"


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


def not_this_sentence(which: str, shown_name: str, negative_id: int) -> str:
    """What "Not this person" did (`shown_name`: the name as the page shows it, escaped by the caller)."""
    return (f"{which} is not {shown_name}: kept as their negative example {negative_id}. Faces that look more like "
            f"it than like {shown_name} are no longer named them (undo: `facerec negatives NAME --remove "
            f"{negative_id}`, or DELETE /api/v1/negatives/{negative_id}).")
