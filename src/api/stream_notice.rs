//! What an event stream says besides events (`gap`, `dropped`, `error`):
//! one type each, which the server writes and the CLI's follower reads.

use super::error::ErrorBody;
use serde::{Deserialize, Serialize};

/// `gap`: events the reader asked for were pruned (retention); the stream
/// goes on from `first`.
#[derive(Debug, Serialize, Deserialize)]
pub struct Gap {
    /// The last event the reader had.
    pub after: u64,
    pub first: u64,
    pub message: String,
}

/// `dropped`: the reader read too slowly and is disconnected.
#[derive(Debug, Serialize, Deserialize)]
pub struct Dropped {
    /// Where a tenant's stream resumes; absent on a stream of every
    /// tenant's, which cannot be resumed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_seq: Option<u64>,
    pub message: String,
}

/// `error`: the stream's token is no longer taken, and the stream ends.
#[derive(Serialize, Deserialize)]
pub struct Refused {
    /// The API's error shape (`UNAUTHENTICATED` for a revoked or expired
    /// token).
    pub error: ErrorBody,
    /// Where a tenant's stream resumes, with a token that is taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_seq: Option<u64>,
}
