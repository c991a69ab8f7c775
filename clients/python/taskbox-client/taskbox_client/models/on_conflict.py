from enum import StrEnum


class OnConflict(StrEnum):
    ERROR = "error"
    USE_EXISTING = "use_existing"

    def __str__(self) -> str:
        return str(self.value)
