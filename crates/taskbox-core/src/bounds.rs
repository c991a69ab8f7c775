//! The bounds a job is held to that more than one layer enforces: the
//! enqueue, the registry's checks of a definition and the runner each
//! import them from here, below all of them.

/// Longest delay (or deadline) an enqueue may ask for: one year. A
/// workflow's deadline and a step's budget are held to it too, and an
/// owed callback waits no longer.
pub const MAX_DELAY_MS: u64 = 366 * 24 * 60 * 60 * 1000;
/// Longest fallback chain followed, whatever the definitions say.
pub const MAX_FALLBACK_DEPTH: u32 = 8;
/// Longest chain of callbacks from one enqueued job (a callback's job
/// whose own callback enqueues another, …): what ends a loop that two
/// definitions made at once (each checked against the other's old version).
pub const MAX_CALLBACK_DEPTH: u32 = 16;
/// Largest component a server takes unless told otherwise
/// (`--max-component-bytes`): the sandbox checks an upload against it, and
/// `taskbox build` warns before an upload would be refused.
pub const DEFAULT_MAX_COMPONENT_BYTES: usize = 64 << 20;
/// Largest component a server can be told to take.
pub const MAX_COMPONENT_BYTES_CEILING: usize = 512 << 20;
