"""What an attempt ends with besides an output: a failure, a snooze, a wait."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class Fail(Exception):
    """Fails the attempt. `code` is machine-readable (a task's `non_retryable` list matches
    it); `retryable=False` fails the job now, without further attempts."""

    def __init__(self, code: str, message: str = "", *, retryable: bool = False):
        super().__init__(f"{code}: {message}" if message else code)
        self.code = code
        self.message = message
        self.retryable = retryable

    @classmethod
    def retry(cls, code: str, message: str = "") -> Fail:
        """A failure another attempt may get past (a timeout upstream, say)."""
        return cls(code, message, retryable=True)


@dataclass(frozen=True)
class Snooze:
    """Run again after `ms` milliseconds; it does not use up an attempt."""

    ms: int

    def __post_init__(self) -> None:
        if not isinstance(self.ms, int) or isinstance(self.ms, bool) or self.ms < 0:
            raise ValueError(f"Snooze takes whole milliseconds, 0 or more, not {self.ms!r}")


@dataclass(frozen=True)
class Wait:
    """Park the job until it is resumed through the API; `reason` (JSON) says what it waits for."""

    reason: Any = None
