from enum import StrEnum


class OutcomeType0Status(StrEnum):
    COMPLETED = "completed"

    def __str__(self) -> str:
        return str(self.value)
