"""The page's one admin gate: every action that shows or changes enrolled people passes through it, and no tab
checks the password itself.

An action is gated where it is registered (`expose(..., admin=context.gate)`): the gate takes the password field's
value out of the action's inputs (where the API has always had it, so `gradio_client` calls keep their order),
checks it against the caller's address (`facerec.access.admin.AdminGuard`: wrong guesses lock the address out),
and only then runs the action with its other inputs. A refused action changes nothing; `refused` lets it delete
what it received (an upload) all the same. `tests/test_admin_gate.py` walks every event of the page, so a tab that
registers an action without the gate fails unless the action is one the page leaves open on purpose.

Three things were once all called "password": the operator's secret (`admin_password`, given to `AdminGuard`), the
page's one field (`AdminGate.field`), and what a user typed into it (`typed`, seen only here)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence

import gradio as gr

from facerec.access.admin import AdminGuard
from facerec.errors import LockedOut

GATED = "__admin_only__"  # the mark a gated function carries (and every wrapper copies with its __dict__)


class AdminGate:
    """The admin guard and the page's password field, together."""

    def __init__(self, guard: AdminGuard, field: gr.Textbox) -> None:
        self._guard, self.field = guard, field

    @property
    def needed(self) -> bool:
        """Whether an admin password is set (else the gate admits everyone)."""
        return self._guard.enabled

    def admits(self, typed: str | None, request: gr.Request | None) -> tuple[bool, str]:
        """For an action open to everyone that shows the admin more (identify): (whether `typed` is the admin
        password, "" or why it was not checked). A wrong password refuses; while this address is locked out the
        action is answered as for anyone, and the sentence says why."""
        try:
            return self._guard.is_admin(typed, client_address(request)), ""
        except LockedOut as error:
            return False, f"The admin password was not checked. {error}"

    def guarded(self, core: Callable, inputs: Sequence, *, ask: Callable | None = None,
                refused: Callable | None = None, skip: Callable[..., dict | None] | None = None
                ) -> tuple[Callable, list]:
        """(`core` behind the gate, its inputs with the password field). `inputs` name the field where the API has
        it; without it the field is added last. `core` is called with the other inputs' values. `ask`: what to
        show instead when a password is needed and nothing was typed (nobody has tried anything: no refusal, no
        failure counted); `refused`: called with those values when the gate refuses; `skip`: given those values,
        the answer to give instead of running, checking nothing (a follow-up of an action that failed), or None."""
        if inspect.isgeneratorfunction(core):
            raise TypeError("a gated action answers at once (no steps)")
        inputs = list(inputs) if self.field in inputs else [*inputs, self.field]
        at, count = inputs.index(self.field), len(inputs)

        def gated(*values):
            values = list(values)
            request = values.pop(count) if len(values) > count else None
            typed = values.pop(at)
            skipped = skip(*values) if skip is not None else None
            if skipped is not None:
                return skipped
            if ask is not None and self.needed and not typed:
                return ask(*values)
            try:
                self._guard.check(typed, client_address(request))
            except Exception:
                if refused is not None:
                    refused(*values)
                raise
            return core(*values)

        gated.__name__, gated.__qualname__, gated.__doc__ = core.__name__, core.__qualname__, core.__doc__
        gated.__signature__ = _signature(core, at, count)
        gated.__annotations__ = {"request": gr.Request}  # Gradio passes the request by this annotation
        setattr(gated, GATED, True)
        return gated, inputs


def _signature(core: Callable, at: int, count: int) -> inspect.Signature:
    """`core`'s parameters for its inputs with `password` at the field's place, then the request: what Gradio
    reads to pass the request, and what the API's documentation lists."""
    own = [p for p in inspect.signature(core).parameters.values() if p.name != "request"][:count - 1]
    password = inspect.Parameter("password", inspect.Parameter.POSITIONAL_OR_KEYWORD, default="")
    shown = [*own[:at], password, *own[at:]]
    first_default = next(i for i, p in enumerate(shown) if p.default is not inspect.Parameter.empty)
    shown = [p if i < first_default or p.default is not inspect.Parameter.empty else p.replace(default=None)
             for i, p in enumerate(shown)]  # none without a default after one with (the password's "")
    request = inspect.Parameter("request", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None,
                                annotation=gr.Request)
    return inspect.Signature([*shown, request])


def client_address(request: gr.Request | None) -> str:
    """The caller's network address: what the admin guard counts wrong passwords by."""
    client = getattr(request, "client", None)
    return str(getattr(client, "host", None) or "unknown")
