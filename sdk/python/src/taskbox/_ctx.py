"""The attempt's side of the sandbox: the job, logs, progress, secrets, other tasks.

Inside taskbox each call goes to the host (`_world.Host`); in a native test, `Ctx.test()`
keeps logs and progress in `ctx.logs` (and prints them to stderr) and takes secrets from
`with_secret`.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import Any, Protocol

from ._convert import to_json
from ._outcome import Fail

LEVELS = ("trace", "debug", "info", "warn", "error")


@dataclass(frozen=True)
class Job:
    """Which job and attempt is running. `id` is stable across attempts: use it as an
    idempotency key. `attempt` is 1 for the first."""

    id: str
    attempt: int
    queue: str


@dataclass(frozen=True)
class LogLine:
    level: str
    message: str


@dataclass(frozen=True)
class Response:
    """An HTTP answer, its whole body read."""

    status: int
    headers: list[tuple[str, str]]
    body: bytes

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    def header(self, name: str) -> str | None:
        """The first value of header `name` (any case), or None."""
        name = name.lower()
        return next((v for k, v in self.headers if k.lower() == name), None)

    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")

    def json(self) -> Any:
        return json.loads(self.body)


#: `fetch-error` codes after which another attempt may fare better.
_RETRYABLE_FETCH = {"timeout", "unavailable", "error"}


class Host(Protocol):
    def log(self, level: str, message: str) -> None: ...
    def fetch(self, method: str, url: str, headers: list[tuple[str, str]], body: bytes) -> Response: ...
    def progress(self, percent: int, note: str) -> None: ...
    def secret(self, name: str) -> str | None: ...
    def invoke(self, task: str, input: str) -> str: ...
    def spawn(self, task: str, input: str) -> str: ...
    def start_span(self, name: str, attributes: list[tuple[str, str]]) -> int: ...
    def add_event(self, span: int, name: str, attributes: list[tuple[str, str]]) -> None: ...
    def set_error(self, span: int, message: str) -> None: ...
    def end_span(self, span: int) -> None: ...


def _pairs(attributes: dict[str, Any] | None) -> list[tuple[str, str]]:
    return [(str(k), str(v)) for k, v in (attributes or {}).items()]


class Span:
    """A span of the task's own in its attempt's trace (`Ctx.span`): a context manager that
    ends it on leaving (an exception marks it failed). Spans started inside nest under it. The
    host redacts the task's secrets and bounds what it keeps; natively, and without a trace
    collector on the server, it does nothing."""

    def __init__(self, host: Host | None, handle: int) -> None:
        self._host = host
        self._handle = handle

    def event(self, name: str, attributes: dict[str, Any] | None = None) -> None:
        """Adds an event, at this moment."""
        if self._host is not None and self._handle:
            self._host.add_event(self._handle, str(name), _pairs(attributes))

    def error(self, message: str) -> None:
        """Marks the span as failed, saying why."""
        if self._host is not None and self._handle:
            self._host.set_error(self._handle, str(message))

    def end(self) -> None:
        """Ends it, and those still open inside it (again: nothing)."""
        if self._host is not None and self._handle:
            self._host.end_span(self._handle)
            self._handle = 0

    def __enter__(self) -> Span:
        return self

    def __exit__(self, kind: Any, value: Any, tb: Any) -> None:
        if value is not None:
            self.error(f"{kind.__name__}: {value}")
        self.end()


@dataclass
class Ctx:
    job: Job
    _host: Host | None = None
    _secrets: dict[str, str] = field(default_factory=dict)
    #: In a test context, every log line and progress report, in order.
    logs: list[LogLine] = field(default_factory=list)

    @classmethod
    def test(cls, *, attempt: int = 1, secrets: dict[str, str] | None = None) -> Ctx:
        """A context for running a task's function natively: attempt `attempt` of job `test`
        on queue `default`."""
        return cls(Job(id="test", attempt=attempt, queue="default"), None, dict(secrets or {}))

    def with_secret(self, name: str, value: str) -> Ctx:
        """This test context with a secret set."""
        self._secrets[name] = value
        return self

    def log(self, level: str, message: str) -> None:
        """Appends a line to the attempt's log; `level` is one of trace, debug, info, warn,
        error. The host bounds the log: the excess is dropped and counted."""
        if level not in LEVELS:
            raise ValueError(f"log level {level!r} is none of {', '.join(LEVELS)}")
        message = str(message)
        if self._host is not None:
            self._host.log(level, message)
        else:
            self.logs.append(LogLine(level, message))
            print(f"[{level}] {message}", file=sys.stderr)

    def debug(self, message: str) -> None:
        self.log("debug", message)

    def info(self, message: str) -> None:
        self.log("info", message)

    def warn(self, message: str) -> None:
        self.log("warn", message)

    def error(self, message: str) -> None:
        self.log("error", message)

    def progress(self, percent: int, note: str = "") -> None:
        """Reports progress (0-100; more is taken as 100) with a short note. It shows on the
        job and extends its lease."""
        percent = max(0, min(100, int(percent)))
        if self._host is not None:
            self._host.progress(percent, note)
        else:
            self.logs.append(LogLine("progress", f"{percent}% {note}".rstrip()))
            print(f"[progress] {percent}% {note}", file=sys.stderr)

    def secret(self, name: str) -> str:
        """The tenant's secret `name`. The task must declare it (`taskbox task push ...
        --secret NAME`) and the tenant must have set it (`taskbox secret set NAME`); otherwise
        this raises the final failure `missing_secret`."""
        found = self._host.secret(name) if self._host is not None else self._secrets.get(name)
        if found is None:
            raise Fail(
                "missing_secret",
                f"secret {name} is not set: set it with `taskbox secret set {name}` "
                "and declare it in the task's secrets",
            )
        return found

    def fetch(
        self,
        url: str,
        *,
        method: str = "GET",
        headers: dict[str, str] | list[tuple[str, str]] | None = None,
        body: bytes | str | None = None,
        json_body: Any = None,
    ) -> Response:
        """An outbound HTTP request to a host the task's `network.allow` lists, its whole answer
        read. `json_body` sends JSON (and its content type). A request the host refuses or
        cannot make raises `Fail` with code `http_<why>`: `http_denied`, `http_invalid` and
        `http_too_large` final, `http_timeout`, `http_unavailable` and `http_error`
        retryable. A 4xx or 5xx is an answer, not a failure: look at `status`."""
        if self._host is None:
            raise Fail("unavailable", f"{url}: outbound HTTP runs only inside taskbox, not in a native test")
        pairs = list(headers.items()) if isinstance(headers, dict) else list(headers or [])
        if json_body is not None:
            body = to_json(json_body)
            if not any(k.lower() == "content-type" for k, _ in pairs):
                pairs.append(("content-type", "application/json"))
        data = body.encode("utf-8") if isinstance(body, str) else (body or b"")
        return self._host.fetch(method.upper(), url, pairs, data)

    def invoke(self, task: str, input: Any) -> Any:
        """Runs task `task` of this tenant to completion on `input` and returns its output
        (parsed JSON), in its own sandbox with its own limits and retries. Memoized per job:
        a retried job gets the result of a call it made before without the task running
        again."""
        if self._host is None:
            raise _native(task)
        return json.loads(self._host.invoke(task, to_json(input)))

    def spawn(self, task: str, input: Any) -> str:
        """Enqueues a job of task `task` on `input` as this job's child and returns its id. A
        retried job that spawns at the same place in its order of calls gets the same child."""
        if self._host is None:
            raise _native(task)
        return self._host.spawn(task, to_json(input))

    def span(self, name: str, attributes: dict[str, Any] | None = None) -> Span:
        """Starts a span of the task's own: `with ctx.span("charge", {"order": id}) as s:`."""
        if self._host is None:
            return Span(None, 0)
        return Span(self._host, self._host.start_span(str(name), _pairs(attributes)))


def _native(task: str) -> Fail:
    return Fail("unavailable", f"{task}: other tasks run only inside taskbox, not in a native test")
