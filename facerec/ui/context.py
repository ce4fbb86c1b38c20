"""What every tab shares: the one Gallery, the admin guard, and where Gradio keeps the files it holds."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import gradio as gr
from gradio.utils import get_upload_folder

from facerec.access.admin import AdminGuard
from facerec.gallery import Gallery


@dataclass
class AppContext:
    gallery: Gallery
    guard: AdminGuard
    app: gr.Blocks | None = None  # set once the Blocks exist
    web_cache: Path = field(default_factory=lambda: Path(get_upload_folder()))  # Gradio's uploads, its files

    @property
    def password_needed(self) -> bool:
        return self.guard.enabled

    def require_admin(self, password: str | None, request: gr.Request | None) -> None:
        self.guard.check(password, client_address(request))

    def is_admin(self, password: str | None, request: gr.Request | None) -> bool:
        return self.guard.is_admin(password, client_address(request))


def client_address(request: gr.Request | None) -> str:
    """The caller's network address: what the admin guard counts wrong passwords by."""
    client = getattr(request, "client", None)
    return str(getattr(client, "host", None) or "unknown")
