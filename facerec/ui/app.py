"""The page: a header, then one tab per job over one shared `Gallery`; each tab is built by its own module."""

from __future__ import annotations

import gradio as gr

from facerec.access.admin import AdminGuard
from facerec.gallery import Gallery
import facerec.ui.enroll_tab as enroll_tab
import facerec.ui.gallery_tab as gallery_tab
import facerec.ui.health_tab as health_tab
import facerec.ui.identify_tab as identify_tab
import facerec.ui.live_tab as live_tab
import facerec.ui.verify_tab as verify_tab
from facerec.ui.admin_gate import AdminGate
from facerec.ui.context import AppContext
from facerec.ui.password_field import admin_password_field
from facerec.ui.text import markdown_text
from facerec.ui.threshold_controls import shown_percent
from facerec.ui.uploads import CACHE_MAX_AGE_S


def build_app(gallery: Gallery, admin_password: str | None = None, api_docs: str | None = None) -> gr.Blocks:
    """The page over `gallery`; `api_docs`: where the REST API's documentation is served (linked at the foot of
    the page, in place of Gradio's own "Use via API" panel, which documents the page's internals instead)."""
    services = gallery.services()  # what the verbs do not offer
    default_percent = shown_percent(services.settings)
    needs_password = bool(admin_password)
    with gr.Blocks(title="facerec", delete_cache=(60, CACHE_MAX_AGE_S)) as app:
        where = "" if admin_password else f"; gallery {markdown_text(services.settings.home)}"  # no server paths
        gr.Markdown(f"# facerec\nEnroll a person from one photo, then find them in any photo. Model "
                    f"{markdown_text(services.maintenance.model_id)}{where}.")
        for warning in services.maintenance.warnings():
            gr.Markdown(f"**Warning:** {markdown_text(warning)}")
        context = AppContext(gallery, AdminGate(AdminGuard(admin_password), admin_password_field(needs_password)),
                             app)
        # On a phone every tab stays in sight (no "..." menu hiding two). Gradio places a wrapped tab by its position
        # among everything in the tab set, so each tab makes its gr.State inside itself, never beside it.
        with gr.Tabs(overflow_behavior="wrap"):
            enroll_tab.build(context)
            identify_tab.build(context, default_percent)
            verify_tab.build(context, default_percent)
            live_tab.build(context)
            _tab, people = gallery_tab.build(context)
            health_tab.build(context)
        for event, ok in context.people_changes:  # every change, from any tab, shows in the people list at once
            people.refresh_after(event, ok)
        if api_docs:
            gr.Markdown(f"For programs: the [REST API]({api_docs}) (an API key from `facerec api-key create`).",
                        elem_id="page-footer")
    return app
