from enum import StrEnum


class RetryVersion(StrEnum):
    LATEST = "latest"
    PINNED = "pinned"

    def __str__(self) -> str:
        return str(self.value)
