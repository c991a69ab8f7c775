//! What a store call can fail with, below the store so that the records
//! and rules that return it need no database.

/// What a store call can fail with. Callers map these to their own errors;
/// `Internal` details are logged, never shown to users.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StoreError {
    /// A uniqueness rule refused the write; the message says which.
    #[error("{0}")]
    Conflict(String),
    #[error("not found")]
    NotFound,
    /// A runner's write whose lease is gone (another holds the job, or it
    /// ended): nothing was written.
    #[error("the job's lease is no longer this runner's; nothing was written")]
    Fenced,
    /// A tenant's quota refused new work; nothing was written.
    #[error(transparent)]
    QuotaExceeded(#[from] crate::quota::Exceeded),
    /// The store is shutting down or its writer is gone.
    #[error("the store is unavailable: {0}")]
    Unavailable(String),
    /// A database error: logged, and reported to users without its text.
    #[error("database error: {0}")]
    Internal(String),
}

pub type StoreResult<T> = Result<T, StoreError>;
