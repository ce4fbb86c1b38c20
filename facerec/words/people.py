"""A person's faces in words, for every interface: photos and learned faces counted apart.

A person is searched by the photos they were enrolled and added from, and by the faces learned from confirmed
sightings (`facerec.gallery.templates`). Counted together, one Confirm read as a second photo; so every count a
user reads says "1 photo, 1 learned". (The JSON's `photos` keeps its meaning, every face, with `learned` beside it.)
"""

from __future__ import annotations

from facerec.words.phrasing import plural


def faces_text(faces: int, learned: int = 0) -> str:
    """'2 photos', or '1 photo, 1 learned': `faces` every face of the person (learned ones included, as
    `IdentityInfo.photos` counts them), `learned` how many of those were learned from confirmed sightings."""
    text = plural(faces - learned, "photo")
    return f"{text}, {learned:,} learned" if learned else text
