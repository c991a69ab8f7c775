//! What the store keeps and what its calls take: plain records, the same for
//! every backend, one file per noun. JSON values are kept as their text;
//! times as Unix ms.

mod claim;
mod end;
mod enqueue;
mod events;
mod job;
mod registry;
mod tenant;
mod upkeep;
mod write;

pub use claim::*;
pub use end::*;
pub use enqueue::*;
pub use events::*;
pub use job::*;
pub use registry::*;
pub use tenant::*;
pub use upkeep::*;
pub use write::*;

use super::Millis;
use crate::attempt_log::AttemptLog;
use crate::job::{JobError, JobStatus};
use crate::quota::Quotas;
use serde::{Deserialize, Serialize};
