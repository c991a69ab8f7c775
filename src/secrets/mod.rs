//! Tenant secrets: values a task may read, kept sealed under the server's
//! key. `key` reads or makes the key file, `seal` encrypts and opens
//! values bound to their tenant and name, `rules` says which names and
//! values are allowed, `reveal` opens a task's declared secrets for an
//! attempt; `error` is what any of them can fail with.

mod error;
pub mod key;
mod reveal;
pub mod rules;
pub mod seal;

pub use error::SecretsError;
pub use key::{load_or_create, SecretsKey};
pub use reveal::reveal;
pub use seal::{Sealed, Vault};
