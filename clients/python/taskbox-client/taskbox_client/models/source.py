from enum import StrEnum


class Source(StrEnum):
    GUEST = "guest"
    HOST = "host"
    STDERR = "stderr"
    STDOUT = "stdout"

    def __str__(self) -> str:
        return str(self.value)
