"""What a confirmation taught the gallery, in one sentence for every interface."""

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
