//! Opening the secrets an attempt may read: exactly the named secrets of
//! its own tenant that exist, for the runner to hand to the guest.

use super::seal::{Sealed, Vault, NONCE_LEN};
use super::SecretsError;
use crate::store::JobStore;

/// The tenant's secrets among `names`, opened, by name. A name the tenant
/// has no secret of is simply not in the answer; one that does not open
/// (another key, a damaged row) fails the whole, so that an attempt never
/// runs with part of what it declared.
pub async fn reveal(
    store: &dyn JobStore,
    vault: &Vault,
    tenant: &str,
    names: &[String],
) -> Result<Vec<(String, String)>, SecretsError> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let rows = store.secret_get_many(tenant, names).await?;
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        let nonce: [u8; NONCE_LEN] =
            row.nonce
                .as_slice()
                .try_into()
                .map_err(|_| SecretsError::Corrupt {
                    tenant: tenant.to_owned(),
                    name: row.name.clone(),
                    what: "its nonce is not 24 bytes",
                })?;
        let sealed = Sealed {
            nonce,
            ciphertext: row.ciphertext,
        };
        let value = vault.open(tenant, &row.name, &sealed)?;
        out.push((row.name, value));
    }
    Ok(out)
}
