from enum import StrEnum


class Scope(StrEnum):
    JOBSCANCEL = "jobs:cancel"
    JOBSQUEUE = "jobs:queue"
    JOBSREAD = "jobs:read"
    JOBSRUN = "jobs:run"
    METRICSREAD = "metrics:read"
    SCHEDULESWRITE = "schedules:write"
    SECRETSWRITE = "secrets:write"
    TASKSWRITE = "tasks:write"
    WEBHOOKSWRITE = "webhooks:write"

    def __str__(self) -> str:
        return str(self.value)
