"""The admin password, typed once per page visit for every tab.

Each tab used to ask for it in a field of its own, so a user who had typed it for Identify typed it again in
Gallery and Health. One field at the top of the page now serves every action; its value lives only in the page
(the browser's memory, never on the server's disk or in a cookie), is gone when the page is closed or reloaded,
and the "Forget" button empties it at once.
"""

from __future__ import annotations

import gradio as gr

LABEL = "Admin password (typed once for every tab; kept in this page only)"


def admin_password_field(visible: bool) -> gr.Textbox:
    """The page's one password field (hidden, and always empty, when no admin password is set)."""
    with gr.Row(visible=visible, equal_height=True):
        password = gr.Textbox(label=LABEL, type="password", value="", elem_id="admin-password", scale=4)
        forget = gr.Button("Forget the password", elem_id="forget-password", scale=1)
    forget.click(lambda: "", None, password, api_visibility="private")
    return password
