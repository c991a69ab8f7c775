from enum import StrEnum


class VersionState(StrEnum):
    LIVE = "live"
    ROLLED_BACK = "rolled_back"
    STAGED = "staged"
    SUPERSEDED = "superseded"

    def __str__(self) -> str:
        return str(self.value)
