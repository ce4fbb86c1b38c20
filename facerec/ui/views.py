"""HTML views of enrolled faces and of the health figures, at fixed sizes.

Gradio's own Gallery stretches a lone 112 px crop across the page, crops tiles square and cuts long names; these
views show each stored face at its own size (`FACE_PX`), whole, with its name under it, and a table whose value
column never wraps on a wide screen and that becomes one card per row on a phone. Faces are embedded as `data:` JPEG URIs (the bytes the gallery stores, not re-encoded), so no
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

PHONE_PX = 640  # at most this wide, a table of figures is shown as one card per row (#51 item 4)

# On a phone, three columns left the reading one word wide and cut at the screen's edge: below PHONE_PX each row
# is a card instead, the metric as its heading and each other cell on its own line, named by its column's header
# (`data-label`), wrapping as it needs.
TABLE_CSS = f"""
table.figures {{ border-collapse: collapse; width: 100%; }}
table.figures th, table.figures td {{ border: 1px solid #d1d5db; padding: 6px 8px; text-align: left;
                                      vertical-align: top; }}
table.figures td.value {{ white-space: nowrap; font-variant-numeric: tabular-nums; }}
table.figures td.metric {{ white-space: nowrap; }}
@media (max-width: {PHONE_PX}px) {{
  table.figures, table.figures tbody, table.figures tr, table.figures td {{ display: block; width: auto; }}
  table.figures thead {{ display: none; }}
  table.figures tr {{ border: 1px solid #d1d5db; border-radius: 4px; margin-bottom: 8px; }}
  table.figures td, table.figures td.value, table.figures td.metric {{ border: none; padding: 2px 8px;
                                                                     white-space: normal; overflow-wrap: anywhere; }}
  table.figures td.metric {{ font-weight: 600; padding-top: 6px; }}
  table.figures td[data-label]::before {{ content: attr(data-label) ": "; color: #6b7280; }}
}}
"""


# The Gallery tab's people table (a Gradio Dataframe, styled by the page's head: its own CSS cannot reach it). On a
# phone its columns at their natural width ran off the screen behind a sideways scroll (#51 item 4): there they
# share the width, in a smaller type with less padding, so that every column fits and no word is broken.
PEOPLE_TABLE_WIDTHS = ["8%", "25%", "18%", "20%", "29%"]  # id, name, photos, learned, enrolled
PEOPLE_TABLE_HEAD = f"""<style>
@media (max-width: {PHONE_PX}px) {{
  #people-table th, #people-table td, #people-table th *, #people-table td *, #people-table [role=gridcell],
  #people-table [role=gridcell] * {{ font-size: 11px !important;
      padding-left: 1px !important; padding-right: 1px !important; margin-left: 0 !important;
      margin-right: 0 !important; gap: 0 !important; }}
  #people-table th, #people-table td {{ padding-left: 3px !important; padding-right: 3px !important; }}
  #people-table [role=columnheader] *, #people-table [aria-colindex="5"] * {{ white-space: nowrap; }}
}}
</style>"""


# The Identify tab's table: at 1280 px the "face" header broke as "fac / e" and "candidate 3" was cut off behind a
# sideways scroll (#64 row 8): the columns share the width, and a header's word is never broken.
IDENTIFY_TABLE_WIDTHS = ["7%", "15%", "8%", "16%", "18%", "18%", "18%"]
IDENTIFY_TABLE_HEAD = """<style>
#identify-table [role=columnheader], #identify-table [role=columnheader] * { word-break: keep-all;
    overflow-wrap: normal; hyphens: none; }
</style>"""


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
    """A (metric, value, reading) table; values on one line on a wide screen; one card per row on a phone, each
    cell named by its header (TABLE_CSS)."""
    head = "".join(f"<th>{html_text(h)}</th>" for h in headers)
    value_label, reading_label = html_text(headers[1]), html_text(headers[2])
    body = "".join(f'<tr><td class="metric">{html_text(metric)}</td>'
                   f'<td class="value" data-label="{value_label}">{html_text(value)}</td>'
                   f'<td data-label="{reading_label}">{html_text(reading)}</td></tr>' for metric, value, reading in rows)
    return f'<table class="figures"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _face(jpeg: bytes | None, caption: str) -> str:
    if not jpeg:
        return '<div class="missing">no photo stored</div>'
    data = base64.b64encode(jpeg).decode("ascii")
    return (f'<img src="data:image/jpeg;base64,{data}" width="{FACE_PX}" height="{FACE_PX}" '
            f'alt="{html_text(caption)}">')
