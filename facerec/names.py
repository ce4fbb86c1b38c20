"""Person names: one cleaning rule for every way a name enters the gallery (enroll, rename, import).

A name is shown in browsers, printed on terminals and typed back to find the person again, so it must read the
same everywhere and be typeable: it is NFKC-normalised (one spelling per look: full-width letters, ligatures and
composed accents fold to their plain form), its whitespace is collapsed (no padded or empty names), it is at most
`MAX_NAME_LENGTH` characters, and it may not hold characters that are invisible or change how the text around
them is shown: control characters (terminal escape codes), format characters (zero-width spaces, right-to-left
overrides), private-use, surrogate and unassigned code points. The one exception: a zero-width (non-)joiner
between two non-ASCII letters, which some scripts (Persian, Indic) need to spell a name correctly.

Two names that differ only in the letter case of A-Z ("AJ Cook", "AJ COOK") are the same name (`name_key`, which
agrees with SQLite's `lower()`, so the database can find such a clash through an index).
"""

from __future__ import annotations

import unicodedata

from facerec.errors import InvalidArgument

MAX_NAME_LENGTH = 200
_REFUSED = {
    "Cc": "a control character", "Cf": "an invisible formatting character", "Co": "a private-use character",
    "Cs": "a surrogate code point", "Cn": "an unassigned code point", "Zl": "a line separator",
    "Zp": "a paragraph separator",
}
_JOINERS = {"\u200c", "\u200d"}  # zero-width non-joiner, zero-width joiner
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def clean_name(name: object) -> str:
    """The stored form of a person's name, or InvalidArgument saying what is wrong with it."""
    if name is not None and not isinstance(name, str):
        raise InvalidArgument(f"a name must be text, not {type(name).__name__}")
    text = " ".join(unicodedata.normalize("NFKC", name or "").split())
    if not text:
        raise InvalidArgument("a name is required")
    if len(text) > MAX_NAME_LENGTH:
        raise InvalidArgument(f"names are limited to {MAX_NAME_LENGTH} characters (this one has {len(text)})")
    for position, char in enumerate(text):
        category = unicodedata.category(char)
        if category in _REFUSED and not _joins_letters(text, position):
            raise InvalidArgument(f"a name cannot contain {_REFUSED[category]} (U+{ord(char):04X} at position "
                                  f"{position + 1}); type it as plain text")
    return text


def name_key(name: str) -> str:
    """What two names must share to be the same name: the name with A-Z lower-cased, as SQLite's lower() does."""
    return name.translate(_ASCII_LOWER)


def _joins_letters(text: str, position: int) -> bool:
    if text[position] not in _JOINERS or not 0 < position < len(text) - 1:
        return False
    return all(unicodedata.category(c).startswith("L") and not c.isascii()
               for c in (text[position - 1], text[position + 1]))
