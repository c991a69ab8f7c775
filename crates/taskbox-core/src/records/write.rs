//! Writes of one transaction as data (`JobStore::apply`), and what each did.

use super::*;

/// One write of a transaction (`JobStore::apply`), as data, so that any
/// backend applies the same list in one transaction of its own.
#[derive(Debug, Clone)]
pub enum Write {
    /// As `job_insert`, for one job; an idempotent repeat answers the job
    /// that exists.
    JobInsert(NewJob),
    /// As `job_finalize`, for one attempt; fenced out, it fails the whole.
    JobFinalize(Box<Finalize>),
    JobCancel {
        tenant: String,
        id: String,
    },
    JobResume {
        tenant: String,
        id: String,
        input: Option<NewInput>,
    },
    JobRunNow {
        tenant: String,
        id: String,
    },
    /// As `schedule_put`: a refused one (its rev moved on) fails the whole,
    /// so a slot's job is written only by the write that moves its
    /// schedule past the slot.
    SchedulePut(crate::records::SchedulePut),
    /// Starts the workflow job the `JobInsert` before it made: its stages'
    /// rows, and the first of them as its stage. A job that insert did not
    /// make (an idempotent repeat) is left as it is.
    WorkflowStart(crate::records::WorkflowStart),
    /// As `job_cancel`, for a workflow job: answers `JobCancelled`.
    JobCancelStages(CancelStages),
    /// Records an orchestration call; a place already taken keeps its
    /// first record. Answers `JobCallRecorded`.
    JobCall(crate::records::CallRecord),
}

/// What one write of a transaction did, in the order of the writes.
#[derive(Debug, Clone)]
pub enum Written {
    JobInserted(Inserted),
    /// The job's status after the attempt's end.
    JobFinalized(JobStatus),
    JobCancelled(CancelOutcome),
    JobResumed(JobRecord),
    JobRanNow(JobRecord),
    SchedulePut(crate::records::ScheduleRecord),
    /// Whether the job was started (false: the insert answered a job that
    /// existed).
    WorkflowStarted(bool),
    /// Whether the call was recorded (false: its place was taken).
    JobCallRecorded(bool),
}
