"""The component's export, `run`, over componentize-py's bindings of the `taskbox:sdk/guest`
world: imported only inside the component (`taskbox_entry`), where `wit_world` exists."""

from __future__ import annotations

import wit_world
from componentize_py_types import Err
from wit_world.imports import fetch, host, orchestration, store, trace, types

from ._ctx import _RETRYABLE_FETCH, Job, Response
from ._outcome import Fail
from ._task import run

_LEVELS = {
    "trace": host.Level.TRACE,
    "debug": host.Level.DEBUG,
    "info": host.Level.INFO,
    "warn": host.Level.WARN,
    "error": host.Level.ERROR,
}


def _failure(f: Fail) -> Err:
    return Err(types.Failure(code=f.code, message=f.message, retryable=f.retryable))


class Host:
    def log(self, level: str, message: str) -> None:
        host.log(_LEVELS[level], message)

    def progress(self, percent: int, note: str) -> None:
        host.progress(percent, note)

    def secret(self, name: str) -> str | None:
        try:
            return store.get(name)
        except Err as e:
            raise Fail.retry("secret_error", f"reading secret {name}: {e.value}") from None

    def fetch(self, method: str, url: str, headers: list[tuple[str, str]], body: bytes) -> Response:
        try:
            got = fetch.send(fetch.Request(method=method, url=url, headers=headers, body=body))
        except Err as e:
            code = e.value.code
            raise Fail(f"http_{code}", e.value.message, retryable=code in _RETRYABLE_FETCH) from None
        return Response(got.status, list(got.headers), bytes(got.body))

    def invoke(self, task: str, input: str) -> str:
        try:
            return orchestration.invoke(task, input)
        except Err as e:
            raise Fail(e.value.code, e.value.message, retryable=e.value.retryable) from None

    def spawn(self, task: str, input: str) -> str:
        try:
            return orchestration.spawn(task, input)
        except Err as e:
            raise Fail(e.value.code, e.value.message, retryable=e.value.retryable) from None

    def start_span(self, name: str, attributes: list[tuple[str, str]]) -> int:
        return trace.start_span(name, attributes)

    def add_event(self, span: int, name: str, attributes: list[tuple[str, str]]) -> None:
        trace.add_event(span, name, attributes)

    def set_error(self, span: int, message: str) -> None:
        trace.set_error(span, message)

    def end_span(self, span: int) -> None:
        trace.end_span(span)


class WitWorld(wit_world.WitWorld):
    def run(self, job: types.Job, input: str) -> types.Outcome:
        try:
            kind, value = run(Job(job.id, job.attempt, job.queue), input, Host())
        except Fail as f:
            raise _failure(f) from None
        if kind == "snooze":
            return types.Outcome_Snooze(value)
        if kind == "wait":
            return types.Outcome_Wait(value)
        return types.Outcome_Done(value)
