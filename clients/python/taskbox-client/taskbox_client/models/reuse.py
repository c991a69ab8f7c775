from enum import StrEnum


class Reuse(StrEnum):
    ALLOW = "allow"
    ALLOW_FAILED_ONLY = "allow_failed_only"
    REJECT = "reject"

    def __str__(self) -> str:
        return str(self.value)
