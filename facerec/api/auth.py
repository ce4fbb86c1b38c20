"""Who may call which route: an API key in the `X-API-Key` header, checked against the gallery database.

- No key created (or every key revoked): the API is off, every route answers 503 saying how to create one. Not
  "open on 127.0.0.1": every local user and every local program (a browser tab on a hostile page included) reaches
  127.0.0.1, and the API answers with names and embeddings of enrolled faces, so an open default would publish a
  gallery the moment the app starts; the web UI's own default is unchanged.
- No key sent: 401. An unknown or revoked key: 401. A read key on an admin route: 403.
- `read` keys: identify, verify, list and get people (names and photo counts; never faces, crops or embeddings).
  `admin` keys: all of that, plus enroll, add photo, rename, delete, export, import and the health report (which
  lists confusable people and suspected duplicates).

The admin password of the web UI plays no part here, and keys play none in the UI.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio
from fastapi import Depends, Request, Security
from fastapi.security import APIKeyHeader

from facerec.access.api_keys import ApiKey, ApiKeys
from facerec.api.errors import ApiError, error_response

KEY_HEADER = "X-API-Key"
ROLE_RANK = {"read": 0, "admin": 1}
OFF_MESSAGE = ("The REST API is off: no API key has been created. On the server, run `facerec api-key create --role "
               "admin` (with the app's --home) and send the key in the X-API-Key header.")

key_header = APIKeyHeader(name=KEY_HEADER, auto_error=False, scheme_name="ApiKey",
                          description="A key from `facerec api-key create --role read|admin`.")


PUBLIC_PATHS = ("/docs", "/openapi.json")  # and everything under PUBLIC_PREFIXES: the docs page and its files
PUBLIC_PREFIXES = ("/docs-assets/",)


def caller_key(keys: ApiKeys, key: str | None) -> ApiKey:
    """The active key `key` is; ApiError 503 (the API is off), 401 (none sent, unknown or revoked) otherwise."""
    found = keys.authenticate(key) if key else None
    if found is None:
        if not keys.any_active():
            raise ApiError(503, OFF_MESSAGE, "api_off")
        problem = "unknown or revoked API key" if key else f"this route needs an API key in the {KEY_HEADER} header"
        raise ApiError(401, problem, headers={"WWW-Authenticate": KEY_HEADER})
    return found


class KeyBeforeBody:
    """ASGI middleware: a request without a working key is answered (401, 503) before a byte of its body is read.

    Why: FastAPI reads and parses a multipart body before it runs a route's dependencies, so a keyless request
    announcing 30 MB held a worker for 8 s before the key check refused it. The role (403) is still checked by
    the route's dependency, which finds the key this middleware already looked up."""

    def __init__(self, app, keys: ApiKeys) -> None:
        self.app, self.keys = app, keys

    async def __call__(self, scope, receive, send) -> None:
        path, root = scope.get("path", ""), scope.get("root_path", "")
        path = path[len(root):] if root and path.startswith(root) else path  # within the API's mount
        if scope["type"] != "http" or path in PUBLIC_PATHS or path.startswith(PUBLIC_PREFIXES):
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        sent = headers.get(KEY_HEADER.lower().encode())
        key = sent.decode("latin-1") if sent is not None else None
        try:
            found = await anyio.to_thread.run_sync(caller_key, self.keys, key)
        except Exception as error:  # noqa: BLE001 - 401/503, or a database failure: one JSON line either way
            await error_response(error)(scope, receive, send)
            return
        scope.setdefault("state", {})["api_key"] = found
        await self.app(scope, receive, send)


def requires(role: str) -> Callable:
    """A route dependency: the caller's key, which must have `role` (or a higher one)."""

    def check_key(request: Request, key: str | None = Security(key_header)) -> ApiKey:
        found = getattr(request.state, "api_key", None) or caller_key(request.app.state.keys, key)
        if ROLE_RANK[found.role] < ROLE_RANK[role]:
            raise ApiError(403, f"this route needs an {role} key; key {found.id} ('{found.name}') has the "
                                f"{found.role} role")
        return found

    check_key.__name__ = f"{role}_key"
    return Depends(check_key)


READ = requires("read")
ADMIN = requires("admin")
