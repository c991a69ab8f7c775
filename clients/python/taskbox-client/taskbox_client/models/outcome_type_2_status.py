from enum import StrEnum


class OutcomeType2Status(StrEnum):
    STOPPED = "stopped"

    def __str__(self) -> str:
        return str(self.value)
