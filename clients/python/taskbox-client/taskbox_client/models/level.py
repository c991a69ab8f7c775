from enum import StrEnum


class Level(StrEnum):
    DEBUG = "debug"
    ERROR = "error"
    INFO = "info"
    TRACE = "trace"
    WARN = "warn"

    def __str__(self) -> str:
        return str(self.value)
