"""The sightings part of the health report in words, once, for every interface: the Health tab renders these
sentences as HTML beside its plot and face tiles, `facerec health` prints them (it said the same things in its own
words before, and the two drifted apart)."""

from __future__ import annotations

from dataclasses import dataclass

from facerec.words.phrasing import plural


@dataclass(frozen=True)
class SightingsWords:
    """`basis`: what the figures rest on (or why there is nothing); `trend`: the trend's reading, when there are
    sightings; `weak`: the weak enrollments' sentence, when there are sightings (the people are listed beside)."""

    basis: str
    trend: str | None = None
    weak: str | None = None


def sightings_in_words(memory: dict) -> SightingsWords:
    """The sentences of the report's `sightings` part (`facerec.gallery.health.sightings`)."""
    if not memory.get("enabled"):
        return SightingsWords(f"None kept: {memory.get('reason', 'off')}.")
    if not memory.get("sightings"):
        return SightingsWords(f"None yet. Each identification that names someone is kept (up to "
                              f"{memory['capacity']:,}; the aligned face, not the photo), and then the figures "
                              "above include the faces the gallery sees.")
    sources = ", ".join(f"{count:,} {source}" for source, count in sorted(memory["sources"].items()))
    basis = (f"The figures above rest on {plural(memory['enrolled_faces'], 'enrolled face')} and "
             f"{plural(memory['sightings'], 'sighting')} of {plural(memory['people_seen'], 'person', 'people')} "
             f"({sources}; the memory keeps the latest {memory['capacity']:,}).")
    weak = memory["weak_enrollments"]
    weak_sentence = (f"Weak enrollments ({len(weak)}): replace these people's enrollment photo (add a better photo, "
                     "or enroll them again)." if weak else
                     "No weak enrollments: every person seen matches their enrollment photo well.")
    return SightingsWords(basis, f"Trend: {memory['trend_reading']}", weak_sentence)
