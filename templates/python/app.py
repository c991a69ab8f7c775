"""{{name}}: a taskbox task. `taskbox build` turns it into dist/task.wasm and derives
dist/schema.json from `Input`, which the server checks every job's input against."""

from dataclasses import dataclass

import taskbox


@dataclass
class Input:
    """A job's input: who to greet, and how many times (1 to 10). Its fields and their
    types become the task's JSON Schema; a field with a default may be left out."""

    name: str
    times: int = 1


@taskbox.task
def greet(input: Input, ctx: taskbox.Ctx) -> dict:
    """One attempt. Raise `taskbox.Fail(code, message)` for a failure another attempt will
    not get past, `taskbox.Fail.retry(code, message)` for one it may."""
    name = input.name.strip()
    if not name:
        raise taskbox.Fail("empty_name", "say who to greet: `name` is empty")
    ctx.info(f"greeting {name} {input.times} time(s)")
    return {"greeting": " ".join([f"Hello, {name}!"] * max(1, min(10, input.times)))}
