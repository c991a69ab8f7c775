from enum import StrEnum


class ErrorKind(StrEnum):
    DEADLINE_EXCEEDED = "deadline_exceeded"
    EXPIRED = "expired"
    FUEL_EXHAUSTED = "fuel_exhausted"
    INVALID_OUTPUT = "invalid_output"
    MEMORY_LIMIT = "memory_limit"
    OUTPUT_TOO_LARGE = "output_too_large"
    RUNNER_LOST = "runner_lost"
    STACK_OVERFLOW = "stack_overflow"
    TASK_FAILED = "task_failed"
    TIMEOUT = "timeout"
    TRAP = "trap"

    def __str__(self) -> str:
        return str(self.value)
