from enum import StrEnum


class EventType(StrEnum):
    JOB_CANCELLED = "job.cancelled"
    JOB_COMPLETED = "job.completed"
    JOB_FAILED = "job.failed"
    JOB_QUEUED = "job.queued"
    JOB_RETRYING = "job.retrying"
    JOB_STARTED = "job.started"
    JOB_STEP_ENDED = "job.step_ended"
    JOB_STEP_STARTED = "job.step_started"
    JOB_WAITING = "job.waiting"

    def __str__(self) -> str:
        return str(self.value)
