"""How facerec's messages read: whole sentences, one format per kind of number, and the reason a photo has no face.

The Gallery API raises `FaceRecError`s whose messages state what is wrong; each shell (web app, CLI) adds the one
sentence that says what to do there (tick a box, pass `--force`), because only the shell knows its own controls.
Numbers are written the same way everywhere a person reads them: similarities and thresholds to three decimals,
small rates in short scientific notation (`1e-3`, `9.9e-4`), sizes in PostgreSQL's units (`2.5 GB`), so the same
value never appears as two strings.
"""

from __future__ import annotations

import math


def sentence(text: str) -> str:
    """`text` as a sentence: first letter upper case (the rest untouched: names keep their case), ending in a full
    stop unless it already ends in one, a question mark or an exclamation mark. A sentence that starts with a file
    name or path ("holiday.jpg is not an image") keeps it as it is: the user must recognise their file."""
    text = str(text).strip()
    if not text:
        return text
    first_word = text.split(" ", 1)[0]
    if not any(mark in first_word for mark in "./\\"):
        text = text[0].upper() + text[1:]
    return text if text[-1] in ".?!" else text + "."


def one_line(text: object, limit: int = 300) -> str:
    """A message on one line, whitespace collapsed, at most `limit` characters: what a file's row in a library
    run's outputs, a camera's or a sink's status, or a refused face's outcome says of an error."""
    return " ".join(str(text).split())[:limit]


def sentences(*parts: str) -> str:
    """Several sentences on one line: each made a sentence (`sentence`), empty parts left out."""
    return " ".join(sentence(part) for part in parts if part and str(part).strip())


def plural(count: int, one: str, many: str | None = None) -> str:
    """A count with its noun, the same in every shell: '1 person', '5 people', '2 faces', '1,204 sightings'."""
    return f"{count:,} {one if count == 1 else (many or one + 's')}"


def similarity_text(value: float) -> str:
    """A cosine similarity or similarity threshold, in [-1, 1]: three decimals ('0.612')."""
    return f"{value:.3f}"


def score_text(value: float) -> str:
    """A decision score or its threshold: a cosine in [-1, 1] or a normalised score (cohort standard deviations,
    about -2 to 15): three significant decimals either way ('0.612', '4.21')."""
    return f"{value:.3f}" if abs(value) < 1 else f"{value:.2f}"


def rate_text(rate: float) -> str:
    """A rate in (0, 1] (a false-accept rate per comparison, a tail share) in short scientific notation with two
    significant digits: 0.001 -> '1e-3', 0.0009999 -> '1e-3', 0.00099 -> '9.9e-4', 2.5e-07 -> '2.5e-7'.
    Zero is '0'."""
    if rate == 0:
        return "0"
    if not math.isfinite(rate):
        return str(rate)
    mantissa, exponent = f"{rate:.1e}".split("e")
    mantissa = mantissa.rstrip("0").rstrip(".")
    return f"{mantissa}e{int(exponent)}"


def percent_text(rate: float | None) -> str:
    """A rate people read as a percentage (an accepted or expected stranger-match rate): two significant digits,
    '1%', '0.37%', '<0.001%'; None is 'unknown'."""
    if rate is None:
        return "unknown"
    percent = 100 * rate
    return f"{percent:.2g}%" if percent >= 0.001 or percent == 0 else "<0.001%"


def size_text(count: int) -> str:
    """Bytes as a person reads them, in PostgreSQL's units: '128 MB', '2.6 GB', '900 kB'."""
    for unit, scale in (("GB", 1024 ** 3), ("MB", 1024 ** 2), ("kB", 1024)):
        if count >= scale:
            value = count / scale
            return f"{value:.1f} {unit}" if value < 10 else f"{value:,.0f} {unit}"
    return f"{count:,} bytes"


def no_face_message(pixels_shape: tuple[int, ...], min_face_size: float, photo: str = "the photo",
                    too_small: float | None = None) -> str:
    """Why no face was found in `photo` (an image of `pixels_shape`, [H, W, ...]): its face is under
    `min_face_size` pixels (`too_small`: the width of the largest such face), the photo is too small to hold a
    face the detector keeps, or simply none found."""
    height, width = int(pixels_shape[0]), int(pixels_shape[1])
    if too_small is not None:
        return (f"the face in {photo} is too small ({too_small:.0f} px wide; faces of at least {min_face_size:g} px "
                "are used): use a photo where the face is larger")
    if min(height, width) < min_face_size:
        return (f"{photo} is only {width}x{height} pixels, too small to contain a face (faces smaller than "
                f"{min_face_size:g} pixels are not detected); use a larger photo")
    return f"no face found in {photo}; use a clear, front-facing photo"


def faces_left_out_message(found: int, kept: int) -> str | None:
    """The sentence an answer adds when a photo had more faces than facerec identifies in one photo (the largest
    `kept`), or None when every face was answered."""
    if found <= kept:
        return None
    return sentence(f"the photo has {plural(found, 'face')}; only the {kept:,} largest were identified (crop the "
                    "photo to identify the others)")
