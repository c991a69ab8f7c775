"""Write a taskbox task in Python: a function of the job's input, decorated with `@task`.

    from dataclasses import dataclass
    import taskbox

    @dataclass
    class Input:
        name: str

    @taskbox.task
    def greet(input: Input, ctx: taskbox.Ctx) -> dict:
        if not input.name:
            raise taskbox.Fail("empty_name", "say who to greet")
        ctx.info(f"greeting {input.name}")
        return {"greeting": f"Hello, {input.name}!"}

The function gets the input as its first parameter's type (a dataclass, nested ones and
lists of them included; or `dict`/no annotation for the JSON as parsed) and a `Ctx`. What it
returns is the job's output (anything `json.dumps` takes, dataclasses too); `Snooze(ms)` or
`Wait(reason)` instead park the job. Raising `Fail` fails the attempt with a code; any other
exception is a retryable failure with code `exception`.

`taskbox build` makes the component with componentize-py and derives `dist/schema.json` from
the input dataclass. Nothing here imports the component's bindings until an attempt runs, so
the task's logic tests natively (`Ctx.test()`).
"""

from __future__ import annotations

from ._ctx import Ctx, Job, LogLine, Response, Span
from ._outcome import Fail, Snooze, Wait
from ._task import registered, run, task

__all__ = ["Ctx", "Fail", "Job", "LogLine", "Response", "Snooze", "Span", "Wait", "registered", "run", "task"]
