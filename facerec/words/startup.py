"""What the app says when it starts, one line per guard or opt-in feature in force (#64 row 12): an operator reads
in the terminal which model pack answers, whether the admin password guards the page, and what is kept."""

from __future__ import annotations


def startup_lines(pack_title: str, pack_use: str, password_set: bool, suggestions: bool | None,
                  suggestions_days: int, suggestions_memory: int, store_crops: bool) -> list[str]:
    """The lines after the gallery's own (without the "facerec: " each is printed with)."""
    lines = [f"model pack: {pack_title} (commercial use: {pack_use}; `facerec models` lists the others)"]
    lines.append("admin password: set: enrolling, deleting, exports and every face or name shown need it"
                 if password_set else
                 "admin password: not set: anyone who can open the page may enroll, delete and see the gallery "
                 "(set FACEREC_ADMIN_PASSWORD)")
    lines.append(f"suggested people: on: unknown faces are kept for at most {suggestions_days} days, "
                 f"{suggestions_memory:,} at most" if suggestions else
                 "suggested people: off: unknown faces are not kept (FACEREC_SUGGESTIONS=on keeps them)")
    lines.append("face crops: kept with each face and sighting" if store_crops else
                 "privacy mode: no face crops and no sightings are kept")
    return lines
