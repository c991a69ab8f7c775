//! Tokens as the store keeps them: a token's SHA-256 (never its text), its
//! id, tenant, scopes and times; what a request's check reads and what the
//! admin's list shows, neither of which carries the hash.

use super::*;

/// A token to store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewToken {
    /// What the list shows and a revoke names (`tok_` and 16 hex digits).
    pub id: String,
    /// SHA-256 of the token, hex.
    pub hash: String,
    /// `None` for the admin token.
    pub tenant: Option<String>,
    pub scopes: Vec<Scope>,
    /// When it stops being accepted; `None`: never.
    pub expires_at: Option<Millis>,
}

/// What a request's check needs of a token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRecord {
    pub id: String,
    pub tenant: Option<String>,
    pub scopes: Vec<Scope>,
    pub admin: bool,
    pub expires_at: Option<Millis>,
}

/// A token as the admin's list shows it: never its hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenInfo {
    pub id: String,
    pub tenant: Option<String>,
    pub scopes: Vec<Scope>,
    pub admin: bool,
    pub created_at: Millis,
    /// When a request last came with it, to within a minute (each process
    /// records a token's use at most once a minute); `None`: never since
    /// this was recorded.
    pub last_used_at: Option<Millis>,
    pub expires_at: Option<Millis>,
}

/// What a revoke did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Revocation {
    /// The token is gone.
    Revoked,
    /// No token has that id (or it was revoked already).
    NotFound,
    /// It is the admin token, which is replaced only by a restart with
    /// another `TASKBOX_ADMIN_TOKEN`: nothing was written.
    Admin,
}

impl Revocation {
    /// What a revoke did, from whether its delete (which spares the admin
    /// token) took a row, and else whether the id is the admin token's:
    /// the one rule both backends' revokes answer by.
    pub fn of(deleted: bool, admin: Option<bool>) -> Revocation {
        match (deleted, admin) {
            (true, _) => Revocation::Revoked,
            (false, Some(true)) => Revocation::Admin,
            (false, _) => Revocation::NotFound,
        }
    }
}
