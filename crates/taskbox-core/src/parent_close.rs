//! What a job's end does to the children it spawned: part of its task's
//! definition, kept by the store with the end, carried out by the runner
//! and the workflow's cancel. Below them all, so that each names the same
//! type.

use serde::{Deserialize, Serialize};

/// What becomes of a job's unfinished children when it ends (Temporal's
/// parent close policy).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ParentClose {
    /// They go on.
    #[default]
    Abandon,
    /// They are cancelled as an API cancel would: a workflow child runs its
    /// `on_cancel` chain.
    RequestCancel,
    /// They are cancelled, without their `on_cancel` chains where they are
    /// not running.
    Terminate,
}
