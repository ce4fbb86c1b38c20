"""One action, two doors: the page's button and the API name call the same function; only failures differ.

Each action is a plain function (`core`) of the widgets' values that calls the Gallery API and returns
{component: new value}, or raises `FaceRecError`. `expose` registers it twice:
- for the page (private): a failure becomes the action's status line, next to its button, replacing whatever
  it said before, and the action's other outputs are emptied, so no earlier result stays beside a new error;
  nothing is raised, so Gradio shows no toast and marks no output "Error";
- for the API (`api_name`, no trigger on the page): a failure is raised as `gr.Error`, so `gradio_client`
  callers get an exception carrying the same plain message.
Anything that is not a `FaceRecError` is a bug: a generic line (the traceback goes to the server log).
"""

from __future__ import annotations

import functools
import inspect
import html
import logging
from collections.abc import Callable, Sequence

import gradio as gr

from facerec.errors import FaceRecError
from facerec.ui.admin_gate import AdminGate
from facerec.words.phrasing import sentences
from facerec.ui.text import error_line

# The options of every photo box's `input` listener. Gradio's default trigger mode ("once") drops a trigger that
# arrives while the listener's previous run is pending: a file that is no photo, chosen just after a photo, got no
# message (the photo's run had emptied the status; seen in a clean-clone browser test). "always_last" runs the
# newest upload once the pending run is done.
NEW_UPLOAD = {"trigger_mode": "always_last"}

log = logging.getLogger("facerec.ui")

class Instead:
    """A hint that replaces the error's message (for a message written for another shell, e.g. one listing face
    boxes that the page already draws): `Instead(lambda error: "...")`."""

    def __init__(self, line: Callable[[FaceRecError], str]) -> None:
        self.line = line


Hint = str | Callable[[FaceRecError], str] | Instead
Hints = dict[type, Hint]


def user_message(error: BaseException, hints: Hints | None = None) -> str:
    """The one line a user reads for `error`: its message as a sentence, then what to do here (`hints`: the
    first entry whose class the error is an instance of). Anything but a FaceRecError: a generic line."""
    if not isinstance(error, FaceRecError):
        return f"Something went wrong ({type(error).__name__}); the server log has details."
    hint = next((h for kind, h in (hints or {}).items() if isinstance(error, kind)), None)
    if isinstance(hint, Instead):
        return sentences(hint.line(error))
    if callable(hint):
        hint = hint(error)
    return sentences(str(error), hint or "")


def page_door(core: Callable, outputs: Sequence, status, hints: Hints | None = None, ok=None,
              on_failure: dict | None = None) -> Callable:
    """`core` for the page: on failure {status: the error line, every other output emptied (or as `on_failure`
    says)}; with `ok` (a gr.State), whether it succeeded, for follow-up steps (such as refreshing the people
    list)."""

    def failed(error: Exception) -> dict:
        _log(core, error)
        result = {component: None for component in outputs} | dict(on_failure or {})
        result[status] = error_line(user_message(error, hints), getattr(error, "heading", "Error"))
        if ok is not None:
            result[ok] = False
        return result

    def succeeded(result) -> dict:
        result = dict(result)
        if ok is not None:
            result[ok] = True
        return result

    if inspect.isgeneratorfunction(core):  # an answer in steps (a video's table, then its drawing)
        @functools.wraps(core)
        def steps(*args, **kwargs):
            try:
                for result in core(*args, **kwargs):
                    yield succeeded(result)
            except Exception as error:  # noqa: BLE001 - the page must never show a traceback
                yield failed(error)
        return steps

    @functools.wraps(core)
    def run(*args, **kwargs):
        try:
            result = core(*args, **kwargs)
        except Exception as error:  # noqa: BLE001 - the page must never show a traceback
            return failed(error)
        return succeeded(result)

    return run


def api_door(core: Callable, outputs: Sequence, hints: Hints | None = None) -> Callable:
    """`core` for API callers: its values in `outputs` order; a failure raised as gr.Error (its message HTML-escaped,
    as Gradio's own frontends render it as HTML)."""

    @functools.wraps(core)
    def run(*args, **kwargs):
        try:
            result = core(*args, **kwargs)
        except Exception as error:  # noqa: BLE001 - callers get a readable message, never a traceback
            _log(core, error)
            raise gr.Error(html.escape(user_message(error, hints), quote=False), print_exception=False) from None
        return tuple(result.get(component) for component in outputs)

    return run


def expose(triggers, core: Callable, inputs: Sequence, outputs: Sequence, status, *, api_name: str | None = None,
           page_hints: Hints | None = None, api_hints: Hints | None = None, admin: AdminGate | None = None,
           ask: Callable | None = None, refused: Callable | None = None, also_clear: Sequence = (),
           extra_outputs: Sequence = (), on_failure: dict | None = None, ok=None, **event_options):
    """Register an action on the page's `triggers` (e.g. `[button.click]`) and, with `api_name`, as an API
    endpoint calling `core` with `inputs` and answering `outputs`. `status` is the action's line on the page (an
    API output too, or page-only: the page always updates it).

    With `admin` (the page's `AdminGate`) the action is admin-only: both doors check the password first (`ask`: what
    the page shows when none was typed; `refused`: what to delete when it is refused). Whenever the page's door
    runs, `also_clear` are emptied (other actions' status lines: only the latest result stays on the page);
    `extra_outputs` are components only the page updates, left as they are on failure; `on_failure` gives the
    values some outputs take on failure instead of empty (e.g. hidden). Returns the page event."""
    cleared = {component: None for component in also_clear}
    page_function = core
    if admin is not None:
        page_function, _inputs = admin.guarded(core, inputs, ask=ask, refused=refused)
        core, inputs = admin.guarded(core, inputs, refused=refused)

    if inspect.isgeneratorfunction(page_function):
        def with_cleared(*args, **kwargs):
            for result in page_function(*args, **kwargs):
                yield {**cleared, **result}
    else:
        def with_cleared(*args, **kwargs):
            return {**cleared, **page_function(*args, **kwargs)}

    functools.update_wrapper(with_cleared, page_function)
    page_outputs = list(dict.fromkeys([*outputs, status, *also_clear, *extra_outputs,
                                       *([ok] if ok is not None else [])]))
    page = page_door(with_cleared, [*outputs, *also_clear], status, page_hints, ok, on_failure)
    if api_name:  # first: the page's event, named after the same function, must not take the name
        gr.on([], api_door(core, outputs, api_hints), inputs, list(outputs), api_name=api_name)
    return gr.on(triggers, page, inputs, page_outputs, api_visibility="private", **event_options)


def _log(core: Callable, error: BaseException) -> None:
    if isinstance(error, FaceRecError):
        log.info("%s refused: %s", core.__name__, error)
    else:
        log.error("unexpected error in %s", core.__name__, exc_info=error)
