from enum import StrEnum


class Overlap(StrEnum):
    ALLOW = "allow"
    BUFFER_ONE = "buffer_one"
    SKIP = "skip"

    def __str__(self) -> str:
        return str(self.value)
