//! What the store keeps and what its calls take: plain records, the same for
//! every backend, one file per noun. JSON values are kept as their text;
//! times as Unix ms.

mod call;
mod claim;
mod end;
mod enqueue;
mod events;
mod job;
mod registry;
mod schedule;
mod steps;
mod tenant;
mod token;
mod upkeep;
mod write;

pub use call::*;
pub use claim::*;
pub use end::*;
pub use enqueue::*;
pub use events::*;
pub use job::*;
pub use registry::*;
pub use schedule::*;
pub use steps::*;
pub use tenant::*;
pub use token::*;
pub use upkeep::*;
pub use write::*;

use crate::attempt_log::AttemptLog;
use crate::job::{JobError, JobStatus};
use crate::quota::Quotas;
use crate::time::Millis;
use serde::{Deserialize, Serialize};
