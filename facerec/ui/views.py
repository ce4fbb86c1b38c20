"""HTML views of enrolled faces and of the health figures, at fixed sizes.

Gradio's own Gallery stretches a lone 112 px crop across the page, crops tiles square and cuts long names; these
views show each stored face at its own size (`FACE_PX`), whole, with its name under it, and a table whose value
column never wraps. Faces are embedded as `data:` JPEG URIs (the bytes the gallery stores, not re-encoded), so no
thumbnail ever becomes a file the web server could serve after the person is deleted. Every name is escaped.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence

from facerec.ui.text import html_text

FACE_PX = 112  # the aligned crop's own size: shown 1:1, never stretched

FACES_CSS = f"""
.faces {{ display: flex; flex-wrap: wrap; gap: 12px; align-items: flex-start; }}
.faces figure {{ margin: 0; width: {FACE_PX}px; }}
.faces figure.pair {{ width: {2 * FACE_PX + 4}px; }}
.faces .images {{ display: flex; gap: 4px; }}
.faces img, .faces .missing {{ width: {FACE_PX}px; height: {FACE_PX}px; border-radius: 4px; display: block; }}
.faces .missing {{ background: #e5e7eb; color: #6b7280; font-size: 12px; display: flex; align-items: center;
                   justify-content: center; text-align: center; }}
.faces figcaption {{ font-size: 13px; line-height: 1.3; margin-top: 4px; overflow-wrap: anywhere; }}
.faces .empty {{ color: #6b7280; }}
"""

TABLE_CSS = """
table.figures { border-collapse: collapse; width: 100%; }
table.figures th, table.figures td { border: 1px solid #d1d5db; padding: 6px 8px; text-align: left;
                                      vertical-align: top; }
table.figures td.value { white-space: nowrap; font-variant-numeric: tabular-nums; }
table.figures td.metric { white-space: nowrap; }
"""


def face_tiles(tiles: Sequence[tuple[bytes | None, str]], empty: str = "") -> str:
    """One tile per (stored JPEG crop or None, caption): the face at FACE_PX, the caption under it."""
    if not tiles:
        return f'<div class="faces"><p class="empty">{html_text(empty)}</p></div>' if empty else ""
    figures = [f"<figure>{_face(jpeg, caption)}<figcaption>{html_text(caption)}</figcaption></figure>"
               for jpeg, caption in tiles]
    return f'<div class="faces">{"".join(figures)}</div>'


def pair_tiles(pairs: Sequence[tuple[bytes | None, bytes | None, str]], empty: str = "") -> str:
    """One tile per (face A, face B, caption): both whole faces side by side, the caption under them."""
    if not pairs:
        return f'<div class="faces"><p class="empty">{html_text(empty)}</p></div>' if empty else ""
    figures = [f'<figure class="pair"><div class="images">{_face(a, caption)}{_face(b, caption)}</div>'
               f"<figcaption>{html_text(caption)}</figcaption></figure>" for a, b, caption in pairs]
    return f'<div class="faces">{"".join(figures)}</div>'


def figures_table(headers: Sequence[str], rows: Sequence[tuple[str, str, str]]) -> str:
    """A (metric, value, reading) table; values on one line, always."""
    head = "".join(f"<th>{html_text(h)}</th>" for h in headers)
    body = "".join(f'<tr><td class="metric">{html_text(metric)}</td><td class="value">{html_text(value)}</td>'
                   f"<td>{html_text(reading)}</td></tr>" for metric, value, reading in rows)
    return f'<table class="figures"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _face(jpeg: bytes | None, caption: str) -> str:
    if not jpeg:
        return '<div class="missing">no photo stored</div>'
    data = base64.b64encode(jpeg).decode("ascii")
    return (f'<img src="data:image/jpeg;base64,{data}" width="{FACE_PX}" height="{FACE_PX}" '
            f'alt="{html_text(caption)}">')
