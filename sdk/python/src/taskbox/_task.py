"""`@task` and one attempt of the task it names, kept apart from the component's bindings so
that both test natively."""

from __future__ import annotations

import inspect
import json
import traceback
import typing
from collections.abc import Callable
from typing import Any

from ._convert import from_json, to_json
from ._ctx import Ctx, Host, Job
from ._outcome import Fail, Snooze, Wait

_TASK: Callable[..., Any] | None = None


def task(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Makes `fn(input, ctx)` the module's task. One task a component: a second is refused."""
    global _TASK
    if not callable(fn):
        raise TypeError("@taskbox.task decorates a function of (input, ctx)")
    params = list(inspect.signature(fn).parameters)
    if not 1 <= len(params) <= 2:
        raise TypeError(f"{fn.__name__} takes (input) or (input, ctx), not {len(params)} parameters")
    if _TASK is not None and _TASK is not fn:
        raise RuntimeError(f"a component has one task: {_TASK.__name__} is already it, so {fn.__name__} cannot be")
    _TASK = fn
    return fn


def registered() -> Callable[..., Any]:
    """The task `@task` named; a clear error when the app defines none."""
    if _TASK is None:
        raise RuntimeError("app.py defines no task: decorate its function with @taskbox.task")
    return _TASK


def input_type(fn: Callable[..., Any]) -> Any:
    """The type the task's first parameter is annotated with (`Any` when it is not)."""
    first = next(iter(inspect.signature(fn).parameters))
    return typing.get_type_hints(fn).get(first, Any)


Outcome = tuple[str, Any]
"""("done", JSON text) | ("snooze", milliseconds) | ("wait", JSON text)."""


def run(job: Job, input_text: str, host: Host | None = None, fn: Callable[..., Any] | None = None) -> Outcome:
    """One attempt: parses the input into the task's input type, calls the task, and turns
    what it returns into an outcome. Raises `Fail` for a failure: the task's own, a final
    `bad_input` for input that does not fit, a final `bad_output` for an output that is not
    JSON, and a retryable `exception` for any other exception (its traceback logged)."""
    fn = fn or registered()
    ctx = Ctx(job, host)
    try:
        raw = json.loads(input_text)
    except ValueError as e:
        raise Fail("bad_input", f"the input is not JSON: {e}") from None
    value = from_json(raw, input_type(fn))
    try:
        result = fn(value, ctx) if len(inspect.signature(fn).parameters) == 2 else fn(value)
    except Fail:
        raise
    except Exception as e:  # noqa: BLE001 - any exception of the task's is a failure of the attempt
        ctx.error("".join(traceback.format_exception(e)).rstrip())
        raise Fail.retry("exception", f"{type(e).__name__}: {e}") from None
    if isinstance(result, Snooze):
        return ("snooze", result.ms)
    if isinstance(result, Wait):
        return ("wait", to_json(result.reason))
    return ("done", to_json(result))
