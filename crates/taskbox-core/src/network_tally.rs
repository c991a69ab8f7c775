//! What one attempt's outbound HTTP did, as data: the sandbox counts it,
//! the store keeps it with the attempt and its tenant's usage, the API
//! shows it. Neither side owns it.

use serde::{Deserialize, Serialize};

/// What one attempt's outbound HTTP did, as its record and its tenant's
/// usage keep it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct NetworkTally {
    /// Requests that went out (a connection was attempted).
    pub requests: u64,
    /// Requests the host refused before anything went out.
    pub refused: u64,
    /// Request body bytes sent.
    pub bytes_sent: u64,
    /// Response body bytes received.
    pub bytes_received: u64,
}

impl NetworkTally {
    pub fn is_empty(&self) -> bool {
        *self == NetworkTally::default()
    }

    /// Adds another attempt's (a sub-task's) to this one.
    pub fn add(&mut self, other: &NetworkTally) {
        self.requests = self.requests.saturating_add(other.requests);
        self.refused = self.refused.saturating_add(other.refused);
        self.bytes_sent = self.bytes_sent.saturating_add(other.bytes_sent);
        self.bytes_received = self.bytes_received.saturating_add(other.bytes_received);
    }
}
