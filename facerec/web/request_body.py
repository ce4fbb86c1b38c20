"""A request's body read under rules the server keeps: each chunk judged as it arrives, and a pace it must keep.

Why a body is judged as it arrives, not by what the request announces: an anonymous caller may announce
megabytes and send twelve bytes a minute, so a bound reserved from `Content-Length` is held by bytes that never
come (17 such uploads once locked every photo action out of the web app). Why a pace: nothing else ends a body
that stops arriving (uvicorn waits for it as long as the client keeps the connection open).

When a rule refuses, or the body stops arriving, the app's read of it ends with a parse error (Gradio deletes the
temporary files of a multipart body it was writing on that error, and on no other), whatever the app then answers
is dropped, and the caller gets one line instead: `{"error": ..., "code": ...}`, with the connection closed (the
rest of the body is never read).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass

from starlette.formparsers import MultiPartException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from facerec.words.phrasing import sentence

STALL_S = 20.0  # a body that sends nothing for this long is ended (408)
MIN_RATE = 8 << 10  # bytes per second a body must keep on average after its first STALL_S seconds


@dataclass(frozen=True)
class Refusal:
    """The answer to a request refused by a rule: its status, its one line and a code for programs."""

    status: int
    message: str
    code: str


TOO_SLOW = Refusal(408, f"the request's body arrived too slowly (nothing for {STALL_S:.0f} s, or under "
                        f"{MIN_RATE >> 10} KB/s on average): it was not kept; send it again", "too_slow")

Rule = Callable[[bytes], "Refusal | None"]  # judges each chunk of the body as it arrives


def announces_body(scope: Scope) -> bool:
    """Whether the request says a body follows (a length over zero, or a chunked transfer)."""
    headers = dict(scope.get("headers") or [])
    length = headers.get(b"content-length")
    return b"transfer-encoding" in headers or (length is not None and length.strip() not in (b"", b"0"))


def announced_length(scope: Scope) -> int | None:
    """The request's `Content-Length`, or None without a valid one."""
    length = dict(scope.get("headers") or []).get(b"content-length")
    return int(length) if length is not None and length.isdigit() else None


def deadline_s(began: float, received: int, now: float) -> float:
    """Seconds the next chunk may take: at most `STALL_S`, and no later than the pace allows for the bytes
    received so far (`STALL_S` plus one second per `MIN_RATE` bytes since `began`)."""
    return min(STALL_S, began + STALL_S + received / MIN_RATE - now)


async def read_under(rule: Rule, app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
    """Run `app` on the request, with every chunk of its body passed to `rule` first and the pace kept; on a
    refusal (the rule's, or `TOO_SLOW`), the caller gets it instead of the app's answer."""
    refusal: Refusal | None = None
    started, complete = False, False
    began, received = time.monotonic(), 0

    async def judged() -> Message:
        nonlocal refusal, complete, received
        if complete:  # after the body: the app only listens for the client leaving
            return await receive()
        if refusal is None:
            try:
                message = await asyncio.wait_for(receive(), max(deadline_s(began, received, time.monotonic()), 0))
            except asyncio.TimeoutError:
                refusal = TOO_SLOW
            else:
                if message["type"] != "http.request":
                    return message  # the client left: the app ends as it would
                chunk = message.get("body", b"")
                received += len(chunk)
                refusal = rule(chunk)
                if refusal is None:
                    complete = not message.get("more_body", False)
                    return message
        raise MultiPartException(refusal.message)  # the app's parser ends (and deletes what it wrote)

    async def answered(message: Message) -> None:
        nonlocal started
        if refusal is not None:
            return  # the app's answer to a body it could not read is replaced by the refusal
        started = True
        await send(message)

    try:
        await app(scope, judged, answered)
    except Exception:  # noqa: BLE001 - the app's complaint about the body we ended
        if refusal is None:
            raise
    if refusal is not None and not started:
        await refuse(send, refusal)


async def refuse(send: Send, refusal: Refusal, close: bool = True) -> None:
    """Answer `refusal` in one JSON line and close the connection: whatever is left of the body is never read.
    `close=False` for a body within its limit that nothing has read yet: the server then reads it to its end and
    drops it, so a client that sends its whole body before reading the answer (a browser, httpx) gets the answer,
    not a reset connection."""
    body = json.dumps({"error": sentence(refusal.message), "code": refusal.code}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": refusal.status,
                "headers": headers + ([(b"connection", b"close")] if close else [])})
    await send({"type": "http.response.body", "body": body})
