from enum import StrEnum


class JobsListStatusType1(StrEnum):
    VALUE_0 = ""

    def __str__(self) -> str:
        return str(self.value)
