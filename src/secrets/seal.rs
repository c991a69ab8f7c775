//! Sealing: a secret's value encrypted under the server's key with
//! XChaCha20-Poly1305, a fresh random nonce each time, and its tenant and
//! name bound in as associated data, so that sealed bytes copied to
//! another tenant or name do not open.

use super::key::SecretsKey;
use super::SecretsError;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{Key, XChaCha20Poly1305, XNonce};

/// Bytes of a nonce. 24 random bytes make a repeat under one key
/// negligible however many values are sealed (a 12-byte nonce would not).
pub const NONCE_LEN: usize = 24;
/// What every associated data starts with: these bytes seal a taskbox
/// secret and nothing else.
const DOMAIN: &[u8] = b"taskbox-secret\0";

/// A sealed value: what the store keeps.
#[derive(Clone, PartialEq, Eq)]
pub struct Sealed {
    pub nonce: [u8; NONCE_LEN],
    /// The value encrypted, with its 16-byte tag.
    pub ciphertext: Vec<u8>,
}

impl std::fmt::Debug for Sealed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sealed")
            .field("ciphertext_len", &self.ciphertext.len())
            .finish_non_exhaustive()
    }
}

/// Seals and opens secrets under one key. Its `Debug` shows nothing of it.
pub struct Vault {
    cipher: XChaCha20Poly1305,
}

impl std::fmt::Debug for Vault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Vault { .. }")
    }
}

/// The associated data of a tenant's secret `name`. A name never holds a
/// NUL (`rules::check_name`), so no two (tenant, name) pairs give the same
/// bytes.
fn associated(tenant: &str, name: &str) -> Vec<u8> {
    let mut ad = Vec::with_capacity(DOMAIN.len() + tenant.len() + 1 + name.len());
    ad.extend_from_slice(DOMAIN);
    ad.extend_from_slice(tenant.as_bytes());
    ad.push(0);
    ad.extend_from_slice(name.as_bytes());
    ad
}

impl Vault {
    pub fn new(key: &SecretsKey) -> Vault {
        Vault {
            cipher: XChaCha20Poly1305::new(Key::from_slice(key.bytes())),
        }
    }

    /// Seals `value` as the tenant's secret `name`.
    pub fn seal(&self, tenant: &str, name: &str, value: &str) -> Result<Sealed, SecretsError> {
        let mut nonce = [0u8; NONCE_LEN];
        getrandom::fill(&mut nonce)
            .map_err(|e| SecretsError::Seal(format!("the system's random source failed: {e}")))?;
        let aad = associated(tenant, name);
        let ciphertext = self
            .cipher
            .encrypt(
                XNonce::from_slice(&nonce),
                Payload {
                    msg: value.as_bytes(),
                    aad: &aad,
                },
            )
            // Only a value past what the cipher can count (256 GiB) fails.
            .map_err(|_| SecretsError::Seal("the value is too long to encrypt".into()))?;
        Ok(Sealed { nonce, ciphertext })
    }

    /// Opens what `seal` made of the tenant's secret `name`, under this
    /// key. Another key, tenant or name, or a changed byte, does not open
    /// it.
    pub fn open(&self, tenant: &str, name: &str, sealed: &Sealed) -> Result<String, SecretsError> {
        let aad = associated(tenant, name);
        let plain = self
            .cipher
            .decrypt(
                XNonce::from_slice(&sealed.nonce),
                Payload {
                    msg: &sealed.ciphertext,
                    aad: &aad,
                },
            )
            .map_err(|_| SecretsError::WrongKey {
                tenant: tenant.to_owned(),
                name: name.to_owned(),
            })?;
        // Sealed from a `&str`, so text; anything else is not ours.
        String::from_utf8(plain).map_err(|_| SecretsError::Corrupt {
            tenant: tenant.to_owned(),
            name: name.to_owned(),
            what: "its value is not UTF-8",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vault() -> Vault {
        Vault::new(&SecretsKey::generate().unwrap())
    }

    #[test]
    fn a_sealed_value_opens_as_it_was() {
        let v = vault();
        for value in ["sk_live_123", "ünïcødé ✓", "a\0b", &"x".repeat(64 * 1024)] {
            let s = v.seal("acme", "STRIPE_KEY", value).unwrap();
            assert_eq!(
                s.ciphertext.len(),
                value.len() + 16,
                "the value and its tag"
            );
            assert_eq!(v.open("acme", "STRIPE_KEY", &s).unwrap(), value);
        }
    }

    #[test]
    fn another_tenant_name_or_key_does_not_open_it() {
        let v = vault();
        let s = v.seal("acme", "STRIPE_KEY", "sk_live_123").unwrap();
        for (tenant, name) in [
            ("globex", "STRIPE_KEY"),
            ("acme", "STRIPE_KEY2"),
            ("acme", "stripe_key"),
            // The boundary between tenant and name counts.
            ("acmeS", "TRIPE_KEY"),
        ] {
            let err = v.open(tenant, name, &s).unwrap_err();
            assert!(matches!(err, SecretsError::WrongKey { .. }), "{err}");
        }
        let err = vault().open("acme", "STRIPE_KEY", &s).unwrap_err();
        let said = err.to_string();
        assert!(
            said.contains("was --secrets-key-file changed?")
                && said.contains("every server sharing a database needs the same key"),
            "{said}"
        );
        assert!(!said.contains("sk_live"), "{said}");
    }

    #[test]
    fn a_changed_byte_does_not_open() {
        let v = vault();
        let s = v.seal("acme", "K", "value").unwrap();
        for i in 0..s.ciphertext.len() {
            let mut bad = s.clone();
            bad.ciphertext[i] ^= 1;
            assert!(v.open("acme", "K", &bad).is_err(), "byte {i}");
        }
        let mut bad = s.clone();
        bad.nonce[0] ^= 1;
        assert!(v.open("acme", "K", &bad).is_err());
    }

    #[test]
    fn each_seal_has_a_fresh_nonce() {
        let v = vault();
        let a = v.seal("acme", "K", "same").unwrap();
        let b = v.seal("acme", "K", "same").unwrap();
        assert_ne!(a.nonce, b.nonce);
        assert_ne!(a.ciphertext, b.ciphertext);
    }

    #[test]
    fn nothing_secret_is_shown_by_debug() {
        let v = vault();
        let s = v.seal("acme", "K", "sk_live_123").unwrap();
        assert_eq!(format!("{v:?}"), "Vault { .. }");
        let shown = format!("{s:?}");
        assert_eq!(shown, "Sealed { ciphertext_len: 27, .. }");
    }
}
