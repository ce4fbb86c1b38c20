"""The server's edge: what every request meets before the page (`facerec.ui`) or the REST API (`facerec.api`), and
the assembly of the two over one Gallery in one web server (`server`, which `app.py` starts).

Modules: `body_limit` (one limit on every request body, page and REST alike) and `request_body` (the pace every body
keeps), `upload_quota` (what uploads may hold on the server at once), `page_sessions` (what a page session keeps),
`cache` (where this run keeps Gradio's files), `server` (the assembly). Importing this package imports no web
framework: `app.py` sets where Gradio keeps its files before `server` imports it."""
