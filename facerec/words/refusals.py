"""Why the gallery refused a face, in one sentence: an enrollment or added photo that matches someone else, a face
not learned from a confirmation. The gallery decides with numbers and raises or returns these; each shell then
adds what to do there (a tick box, `--force`, `allow_lookalike=True`), because only it knows its own controls."""

from __future__ import annotations

from facerec.words.phrasing import score_text


def how_set(pinned: bool, comparisons: int) -> str:
    """How the threshold in a refusal was set, in a few words."""
    faces = f"{comparisons:,} enrolled face{'' if comparisons == 1 else 's'}"
    return "pinned" if pinned else f"set by the accepted stranger-match rate for {faces}"


def lookalike_list(lookalikes: list[tuple[str, float]]) -> str:
    """The three best (name, score) pairs: "Tony Blair (4.21), Alan Ball (3.90)"."""
    return ", ".join(f"{name} ({score_text(score)})" for name, score in lookalikes[:3])


def mismatch(name: str, own: float, others: list[tuple[str, float]], threshold: float, how: str) -> str:
    """A photo given for `name` that is not them: it matches `others` better, or does not reach `threshold` with
    `name`'s own faces (`own`, their best score)."""
    if others:
        problem = f"this face matches {lookalike_list(others)} better than '{name}' ({score_text(own)})"
    else:
        problem = (f"this face does not match '{name}' (score {score_text(own)}, threshold "
                   f"{score_text(threshold)}, {how})")
    return f"{problem}; nothing was added"


def possible_duplicate(lookalikes: list[tuple[str, float]], threshold: float, how: str) -> str:
    """A new person's photo that already matches enrolled people: facts only."""
    return (f"this face matches already-enrolled {lookalike_list(lookalikes)}, at or above the threshold "
            f"{score_text(threshold)} ({how}), so it may be the same person")


def not_learned_poor_photo(reasons: list[str]) -> str:
    return "a poor photo of the face (" + "; ".join(reasons or ["low enrollment quality"]) + ")"


NOT_LEARNED_BETTER_MATCH = "it matches someone else better"


def not_learned_no_match(threshold: float) -> str:
    return ("it does not match a photo this person was enrolled or added from at the verification threshold "
            f"({score_text(threshold)}): faces learned before do not vouch for new ones")
