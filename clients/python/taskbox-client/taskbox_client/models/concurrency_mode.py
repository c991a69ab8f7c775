from enum import StrEnum


class ConcurrencyMode(StrEnum):
    EXCLUSIVE = "exclusive"
    SUPERSEDES = "supersedes"

    def __str__(self) -> str:
        return str(self.value)
