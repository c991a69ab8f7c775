from enum import StrEnum


class Abi(StrEnum):
    COMMAND = "command"
    TASK = "task"

    def __str__(self) -> str:
        return str(self.value)
