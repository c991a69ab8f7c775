//! Secret rows as both backends keep them: sealed bytes the store never
//! opens (`secrets::Vault` seals and opens them), and the record a list
//! shows, which never carries them.

use super::db_row::db_row;
use super::{Millis, StoreResult};

/// Most secrets one tenant may have.
pub const MAX_SECRETS: u64 = 1_000;

/// A secret to put: its value already sealed for its tenant and name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSecret {
    pub tenant: String,
    pub name: String,
    pub nonce: Vec<u8>,
    pub ciphertext: Vec<u8>,
}

db_row! {
    /// What is shown of a secret: never its value, sealed or not.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct SecretRecord {
        pub tenant: String,
        pub name: String,
        /// 1 when it was made; one more at each put of the name.
        pub version: u32 as i64,
        pub created_at: Millis,
        pub updated_at: Millis,
    }
}

db_row! {
    /// A secret's sealed value, for the one who opens it (`secrets::reveal`).
    #[derive(Clone, PartialEq, Eq)]
    pub struct SealedSecret {
        pub name: String,
        pub version: u32 as i64,
        pub nonce: Vec<u8>,
        pub ciphertext: Vec<u8>,
    }
}

impl std::fmt::Debug for SealedSecret {
    // The sealed bytes say nothing without the key, but a log has no use
    // for them either.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SealedSecret")
            .field("name", &self.name)
            .field("version", &self.version)
            .field("ciphertext_len", &self.ciphertext.len())
            .finish_non_exhaustive()
    }
}

/// The columns a list reads, in `SecretRecord`'s order.
pub const RECORD_COLUMNS: &str = "tenant, name, version, created_at, updated_at";
/// The columns a reveal reads, in `SealedSecret`'s order.
pub const SEALED_COLUMNS: &str = "name, version, nonce, ciphertext";

/// A put of a name the tenant has: its version one more.
pub const REPLACE: &str = "UPDATE secrets SET version = version + 1, nonce = $1, ciphertext = $2, \
     updated_at = $3 WHERE tenant = $4 AND name = $5 RETURNING version, created_at";
pub const COUNT: &str = "SELECT count(*) FROM secrets WHERE tenant = $1";
/// A put of a new name (after `check_room`).
pub const INSERT: &str = "INSERT INTO secrets (tenant, name, version, nonce, ciphertext, \
     created_at, updated_at) VALUES ($1, $2, 1, $3, $4, $5, $5)";
pub const DELETE: &str = "DELETE FROM secrets WHERE tenant = $1 AND name = $2";
/// The tenant's secrets (`one`; else every tenant's, $1 NULL), by tenant
/// and name.
pub fn list(one: bool) -> String {
    format!(
        "SELECT {RECORD_COLUMNS} FROM secrets WHERE {} ORDER BY tenant, name",
        super::whose::tenant_is(one, "$1")
    )
}

/// What a put answers (`replaced`: the version and creation time of the
/// row it replaced; `None` when it made one).
pub fn put_record(s: NewSecret, now: Millis, replaced: Option<(i64, i64)>) -> (SecretRecord, bool) {
    let (version, created_at) = replaced.map_or((1, now), |(v, at)| (self::version(v), at));
    let record = SecretRecord {
        tenant: s.tenant,
        name: s.name,
        version,
        created_at,
        updated_at: now,
    };
    (record, replaced.is_none())
}

/// Refuses a new secret past `MAX_SECRETS` (`have`: the tenant's now).
pub fn check_room(have: i64) -> StoreResult<()> {
    super::tenants::within("secrets", Some(MAX_SECRETS), have, 1)
}

/// A version as the row keeps it, read back (a version past `u32` would
/// take four billion puts).
pub fn version(v: i64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}
