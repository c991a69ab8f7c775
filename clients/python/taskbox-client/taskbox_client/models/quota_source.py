from enum import StrEnum


class QuotaSource(StrEnum):
    SERVER = "server"
    TENANT = "tenant"

    def __str__(self) -> str:
        return str(self.value)
