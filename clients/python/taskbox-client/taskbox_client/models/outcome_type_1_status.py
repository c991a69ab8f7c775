from enum import StrEnum


class OutcomeType1Status(StrEnum):
    FAILED = "failed"

    def __str__(self) -> str:
        return str(self.value)
