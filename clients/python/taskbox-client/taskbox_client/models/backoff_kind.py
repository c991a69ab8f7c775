from enum import StrEnum


class BackoffKind(StrEnum):
    EXPONENTIAL = "exponential"
    FIXED = "fixed"

    def __str__(self) -> str:
        return str(self.value)
