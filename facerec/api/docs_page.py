"""The API's browsable documentation at `/api/v1/docs`, served from the package: a self-hosted app works offline.

FastAPI's default page loads Swagger UI's script and style from a CDN, so a machine without internet showed a
blank page (#31 item 1). Here the assets come from the `swagger-ui-bundle` package (Apache-2.0, a dependency), as
static files under `/api/v1/docs-assets/`. Should that package be missing, the page is a plain list of the routes
with a link to the OpenAPI document, never a blank one.
"""

from __future__ import annotations

import html
import importlib.util
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS = "/docs-assets"


def add_docs_page(api: FastAPI, title: str) -> None:
    """Serve `/docs` (and its assets) on `api`, which must be built with `docs_url=None`."""
    swagger_ui_path = swagger_assets()
    if swagger_ui_path is not None:
        api.mount(ASSETS, StaticFiles(directory=str(swagger_ui_path)), name="docs-assets")

    @api.get("/docs", include_in_schema=False)
    async def docs(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "").rstrip("/")
        openapi_url = f"{root}{api.openapi_url}"
        if swagger_ui_path is None:
            return HTMLResponse(plain_routes_page(api, title, openapi_url))
        return get_swagger_ui_html(openapi_url=openapi_url, title=title,
                                   swagger_js_url=f"{root}{ASSETS}/swagger-ui-bundle.js",
                                   swagger_css_url=f"{root}{ASSETS}/swagger-ui.css",
                                   swagger_favicon_url=f"{root}{ASSETS}/favicon-32x32.png")


def swagger_assets() -> Path | None:
    """The folder of Swagger UI's files in the installed `swagger-ui-py` (found without importing it)."""
    spec = importlib.util.find_spec("swagger_ui")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(list(spec.submodule_search_locations)[0]) / "static"
    return folder if (folder / "swagger-ui-bundle.js").is_file() else None


def plain_routes_page(api: FastAPI, title: str, openapi_url: str) -> str:
    """Every route, its method and summary, as plain HTML (the fallback: no script, nothing fetched)."""
    rows = []
    for path, operations in sorted(api.openapi()["paths"].items()):
        for method, operation in operations.items():
            rows.append(f"<li><code>{method.upper()} {html.escape(path)}</code> — "
                        f"{html.escape(operation.get('summary', ''))}</li>")
    return (f"<!doctype html><title>{html.escape(title)}</title><h1>{html.escape(title)}</h1>"
            f"<p>The full description: <a href=\"{html.escape(openapi_url)}\">the OpenAPI document</a>.</p>"
            f"<ul>{''.join(rows)}</ul>")
