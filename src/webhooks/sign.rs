//! Signatures of deliveries, as Stripe and Svix make them: the header
//! `Taskbox-Signature: t=<unix seconds>,v1=<hex>`, where `<hex>` is
//! HMAC-SHA256 with the webhook's secret over `<t>.<body>`. A receiver
//! recomputes it and refuses a `t` too far from its clock (a replay).

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The header a delivery's signature is sent in.
pub const HEADER: &str = "taskbox-signature";
/// Shortest secret a webhook may be given.
pub const MIN_SECRET_LEN: usize = 16;
/// Longest secret a webhook may be given.
pub const MAX_SECRET_LEN: usize = 256;

fn mac(secret: &str, t: i64, body: &[u8]) -> Hmac<Sha256> {
    // HMAC takes a key of any length.
    let mut m = Hmac::<Sha256>::new_from_slice(secret.as_bytes())
        .unwrap_or_else(|_| unreachable!("HMAC accepts keys of every length"));
    m.update(t.to_string().as_bytes());
    m.update(b".");
    m.update(body);
    m
}

/// The header's value for `body` sent at `t` (Unix seconds).
pub fn signature(secret: &str, t: i64, body: &[u8]) -> String {
    format!(
        "t={t},v1={}",
        hex::encode(mac(secret, t, body).finalize().into_bytes())
    )
}

/// Whether `header` signs `body` with `secret`, sent within `tolerance_s`
/// of `now` (Unix seconds): what a receiver checks.
pub fn verify(secret: &str, header: &str, body: &[u8], now: i64, tolerance_s: i64) -> bool {
    let mut t = None;
    let mut sigs = Vec::new();
    for part in header.split(',') {
        match part.trim().split_once('=') {
            Some(("t", v)) => t = v.parse::<i64>().ok(),
            Some(("v1", v)) => sigs.extend(hex::decode(v).ok()),
            _ => {}
        }
    }
    let Some(t) = t else { return false };
    if (now - t).abs() > tolerance_s {
        return false;
    }
    sigs.iter()
        .any(|s| mac(secret, t, body).verify_slice(s).is_ok())
}

/// A new secret for a webhook made without one: `whsec_` and 32 random
/// bytes in hex.
pub fn new_secret() -> String {
    let mut b = [0u8; 32];
    getrandom::fill(&mut b).expect("the system's random source failed");
    format!("whsec_{}", hex::encode(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_verifies_only_for_its_body_secret_and_time() {
        let h = signature("s3cret-s3cret-s3cret", 1_700_000_000, b"{\"a\":1}");
        assert!(h.starts_with("t=1700000000,v1="));
        assert!(verify(
            "s3cret-s3cret-s3cret",
            &h,
            b"{\"a\":1}",
            1_700_000_100,
            300
        ));
        assert!(!verify(
            "s3cret-s3cret-s3cret",
            &h,
            b"{\"a\":2}",
            1_700_000_100,
            300
        ));
        assert!(!verify(
            "another-secret-here",
            &h,
            b"{\"a\":1}",
            1_700_000_100,
            300
        ));
        assert!(!verify(
            "s3cret-s3cret-s3cret",
            &h,
            b"{\"a\":1}",
            1_700_001_000,
            300
        ));
        assert!(!verify("s3cret-s3cret-s3cret", "garbage", b"", 0, 300));
    }

    #[test]
    fn new_secrets_differ() {
        let (a, b) = (new_secret(), new_secret());
        assert_ne!(a, b);
        assert_eq!(a.len(), "whsec_".len() + 64);
    }

    /// The construction is HMAC-SHA256 over "t.body", as documented (a
    /// receiver in any language computes the same).
    #[test]
    fn the_construction_is_the_documented_one() {
        let h = signature("key", 1, b"body");
        let mut m = Hmac::<Sha256>::new_from_slice(b"key").unwrap();
        m.update(b"1.body");
        assert_eq!(
            h,
            format!("t=1,v1={}", hex::encode(m.finalize().into_bytes()))
        );
    }
}
