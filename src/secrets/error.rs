//! What handling secrets can fail with, each in words that say what to do.

use crate::store::StoreError;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum SecretsError {
    /// A name outside the rules; the message says which rule.
    #[error("{0}")]
    BadName(String),
    /// A value outside the rules; the message says which rule (never the
    /// value).
    #[error("{0}")]
    BadValue(String),
    #[error(
        "cannot read the secrets key file {}: {source}; let this process read it, or point \
         --secrets-key-file (TASKBOX_SECRETS_KEY_FILE) at the right file",
        path.display()
    )]
    KeyUnreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "the secrets key file {} holds {len} bytes, not the {} of a taskbox secrets key; \
         restore the right file (every server sharing a database needs the same one), or, if \
         the secrets it sealed are lost anyway, move it away so that a new key is made at the \
         next start (and put every secret again)",
        path.display(),
        super::key::KEY_LEN
    )]
    KeyWrongLength { path: PathBuf, len: u64 },
    #[error(
        "cannot create the secrets key file {}: {source}; make sure its directory exists and \
         this process may write there, or point --secrets-key-file (TASKBOX_SECRETS_KEY_FILE) \
         elsewhere",
        path.display()
    )]
    KeyCreate {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "the secrets key does not open secret {name:?} of tenant {tenant:?}: was \
         --secrets-key-file changed? every server sharing a database needs the same key \
         (or put the secret again under this one)"
    )]
    WrongKey { tenant: String, name: String },
    #[error("secret {name:?} of tenant {tenant:?} is stored damaged ({what}); put it again")]
    Corrupt {
        tenant: String,
        name: String,
        what: &'static str,
    },
    #[error("cannot seal the secret: {0}")]
    Seal(String),
    #[error("the task declares secrets, but this process has no secrets key")]
    NoKey,
    #[error(transparent)]
    Store(#[from] StoreError),
}
