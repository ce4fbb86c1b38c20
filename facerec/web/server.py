"""The web server: the page and the REST API over one Gallery, behind one edge.

What a request meets, outermost first: the upload quota (the page's upload route and the REST API's uploads, one
quota for both), then, for the page, the body limit of its other routes; the REST API (mounted at `/api/v1`) checks
the key, admits a video to its waiting room, and only then reads a body, under the same body limit with the API's
own sizes (`facerec.api.service.body_limits`). Every body keeps the same pace (`facerec.web.request_body`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import gradio as gr
from fastapi import FastAPI
from starlette.middleware import Middleware

from facerec.api import API_PREFIX, api_mount, build_api
from facerec.api.service import body_limits
from facerec.gallery import Gallery
from facerec.ui import build_app, forget_served_files
from facerec.web.body_limit import BodyLimit
from facerec.web.page_sessions import MAX_SESSIONS, keep_no_event_values
from facerec.web.upload_quota import FORM_ALLOWANCE, UPLOAD_ROUTE, UploadQuota

PAGE_CONCURRENCY = 4  # page events running at once (the REST API has its own limiter)


@dataclass
class Server:
    """The page and the REST API, assembled, and what their edge needs to know."""
    page: gr.Blocks
    api: FastAPI
    gallery: Gallery
    scratch: Path | None  # where uploads and exports in flight are written (None: the system's temporary folder)
    quota_bytes: int  # what all recent uploads together may hold

    def launch(self, host: str, port: int, share: bool) -> None:
        """Start serving (returns at once: `page.block_thread()` waits)."""
        settings = self.gallery.services().settings
        edge = [Middleware(BodyLimit, own_limits=(f"{API_PREFIX}/", UPLOAD_ROUTE)),
                Middleware(UploadQuota, folder=self.scratch, limit_bytes=self.quota_bytes,
                           per_request_bytes=max(settings.max_import_bytes, settings.video_max_bytes) + FORM_ALLOWANCE,
                           # REST uploads written where the page's are: one quota
                           routes=(UPLOAD_ROUTE, f"{API_PREFIX}/videos/identify", f"{API_PREFIX}/gallery/import"))]
        # quiet: Gradio's own lines name its launch() parameters, not facerec's options
        self.page.queue(default_concurrency_limit=PAGE_CONCURRENCY).launch(
            server_name=host, server_port=port, share=share, quiet=True, prevent_thread_lock=True,
            max_file_size=settings.max_import_bytes, show_error=False, footer_links=[],
            state_session_capacity=MAX_SESSIONS,
            app_kwargs={"routes": [api_mount(self.api)], "middleware": edge})  # the API before Gradio's routes


def assemble(gallery: Gallery, admin_password: str | None, scratch: Path | None, quota_bytes: int) -> Server:
    """The page and the REST API over `gallery`; `scratch`: where imports and exports in flight go (this run's
    private web cache, where the page's go)."""
    keep_no_event_values()  # what anonymous events send is not kept in their sessions (facerec.web.page_sessions)
    page = build_app(gallery, admin_password=admin_password, api_docs=f"{API_PREFIX}/docs")
    api = build_api(gallery, scratch=scratch, after_delete=lambda: forget_served_files(page),
                    edge=[(BodyLimit, body_limits(gallery.services().settings))])
    return Server(page, api, gallery, scratch, quota_bytes)
