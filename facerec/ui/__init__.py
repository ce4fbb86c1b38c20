"""The Gradio app: Enroll, Identify, Verify, Gallery and Health tabs over one shared `Gallery`.

Callbacks only translate between widgets and the Gallery API; no face logic lives here. Each action's result or
error appears next to its button and replaces the previous one; errors are one plain line, never a toast or a
traceback (the traceback goes to the server log). Every action also has an `api_name`, so `gradio_client` can
call it; there an error is an exception carrying the same line (`facerec.ui.actions`).

With an admin password (`facerec.access.admin`), everything that shows or returns enrolled faces, names or embeddings
needs it: enroll, add photo, rename, delete, import, export, the people list and the health report. Detect and
verify (which see only the uploaded photos) stay open, and so does identify, which without the password names
only faces that match at or above the gallery's threshold and shows nothing about anyone else.

Modules: `app` (the page), one per tab (`enroll_tab`, `identify_tab`, `verify_tab`, `gallery_tab`,
`health_tab`), and what they share: `actions` (one action, two doors), `face_picker`, `threshold_controls`,
`uploads` (files the server holds), `kept_photos` (photos pages keep, bounded in bytes), `views` (HTML of faces and
tables), `text` (escaping, status lines), `admin_gate` (the one check of the admin password), `feedback_panel`
(Confirm / Correct under an identification). What the web server takes from anyone is bounded before the page:
`facerec.web`.
"""

from facerec.ui.app import build_app
from facerec.ui.text import markdown_text
from facerec.ui.uploads import CACHE_MAX_AGE_S, EXPORT_LIFETIME_S, forget_served_files

__all__ = ["CACHE_MAX_AGE_S", "EXPORT_LIFETIME_S", "build_app", "forget_served_files", "markdown_text"]
