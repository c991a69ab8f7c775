from enum import StrEnum


class ParentClose(StrEnum):
    ABANDON = "abandon"
    REQUEST_CANCEL = "request_cancel"
    TERMINATE = "terminate"

    def __str__(self) -> str:
        return str(self.value)
