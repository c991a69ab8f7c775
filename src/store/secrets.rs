//! Secrets as both backends keep them: sealed bytes the store never opens
//! (`secrets::Vault` seals and opens them), and the record a list shows,
//! which never carries them.

use super::db_row::db_row;
use super::exec::{args, Commit, Exec};
use super::{JobStore, Millis, StoreError, StoreResult};

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
/// A put of a new name (after its room under `MAX_SECRETS`).
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

/// The sealed rows of the tenant ($1) whose names are in the JSON array $2.
fn sealed(d: super::dialect::Dialect) -> String {
    format!(
        "SELECT {SEALED_COLUMNS} FROM secrets WHERE tenant = $1 AND name IN ({}) ORDER BY name",
        d.json_texts(2)
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

impl dyn JobStore {
    /// Puts a tenant's secret, sealed: replaces the one of that name (its
    /// version one more, `created_at` kept) or makes it at version 1,
    /// within the tenant's `MAX_SECRETS`; `true` when it is new.
    pub async fn secret_put(&self, s: NewSecret) -> StoreResult<(SecretRecord, bool)> {
        self.write(Commit::PROMPT, move |tx, now| Box::pin(put(tx, now, s)))
            .await
    }

    /// A tenant's secrets (`None`: every tenant's), by tenant and name (as
    /// bytes): never their sealed values.
    pub async fn secret_list(&self, tenant: Option<&str>) -> StoreResult<Vec<SecretRecord>> {
        let sql = list(tenant.is_some());
        self.read().await?.all(&sql, args![tenant]).await
    }

    /// Deletes a tenant's secret; `false` when it has none of that name.
    pub async fn secret_delete(&self, tenant: &str, name: &str) -> StoreResult<bool> {
        let (tenant, name) = (tenant.to_owned(), name.to_owned());
        self.write(Commit::PROMPT, move |tx, _| {
            Box::pin(async move { Ok(tx.execute(DELETE, args![&tenant, &name]).await? == 1) })
        })
        .await
    }

    /// The sealed values of those of `names` the tenant has, by name;
    /// names it has not are left out.
    pub async fn secret_get_many(
        &self,
        tenant: &str,
        names: &[String],
    ) -> StoreResult<Vec<SealedSecret>> {
        if names.is_empty() {
            return Ok(Vec::new());
        }
        // The names as one JSON array: one statement however many there are.
        let names = serde_json::to_string(names)
            .map_err(|e| StoreError::Internal(format!("secret names as JSON: {e}")))?;
        let mut c = self.read().await?;
        c.all(&sealed(c.dialect()), args![tenant, &names]).await
    }
}

/// Replaces the tenant's secret of that name (its version one more), or
/// makes it at version 1 within `MAX_SECRETS`; `true` when it is new.
async fn put(tx: &mut dyn Exec, now: Millis, s: NewSecret) -> StoreResult<(SecretRecord, bool)> {
    // Puts of one tenant's secrets one after the other: two new names at
    // once count each other, and two puts of one new name make one row.
    super::tenants::hold(tx, &s.tenant, "secrets").await?;
    let replaced: Option<(i64, i64)> = tx
        .optional(
            REPLACE,
            args![&s.nonce[..], &s.ciphertext[..], now, &s.tenant, &s.name],
        )
        .await?;
    if replaced.is_none() {
        let have: Option<i64> = tx.scalar(COUNT, args![&s.tenant]).await?;
        super::tenants::within("secrets", Some(MAX_SECRETS), have.unwrap_or_default(), 1)?;
        let a = args![&s.tenant, &s.name, &s.nonce[..], &s.ciphertext[..], now];
        tx.execute(INSERT, a).await?;
    }
    Ok(put_record(s, now, replaced))
}

/// A version as the row keeps it, read back (a version past `u32` would
/// take four billion puts).
pub fn version(v: i64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}
