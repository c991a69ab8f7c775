//! Which names and values a secret may have, and how many a tenant may
//! keep: names like environment variables (dots and dashes allowed),
//! values text of 8 bytes to 64 KiB (`wasi:config` values are strings;
//! a shorter value would make redaction take common text out of every
//! log and output, and make redacted text longer than what it replaced).

use super::SecretsError;

/// Longest name, in characters (all ASCII).
pub const MAX_NAME_LEN: usize = 64;
/// Largest value, in bytes of UTF-8.
pub const MAX_VALUE_BYTES: usize = 64 * 1024;
/// Smallest value, in bytes: redaction takes every occurrence of a value
/// out of what an attempt leaves, so a value of a byte or two would take
/// out half the text (and its marker is longer than it).
pub const MIN_VALUE_BYTES: usize = 8;
/// Most secrets one tenant may keep (the store holds it to this).
pub use crate::store::MAX_SECRETS;

const NAME_RULE: &str = "a name is 1 to 64 of A-Z a-z 0-9 _ - . and starts with a letter or _ \
     (like STRIPE_KEY)";

/// Refuses a name outside the rules, saying which rule it breaks.
pub fn check_name(name: &str) -> Result<(), SecretsError> {
    let shown = || crate::text::bounded(name, MAX_NAME_LEN + 8);
    let Some(first) = name.chars().next() else {
        return Err(SecretsError::BadName(format!(
            "the secret's name is empty; {NAME_RULE}"
        )));
    };
    if let Some((at, c)) = name
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        return Err(SecretsError::BadName(format!(
            "secret name {:?} has {c:?} at byte {at}; {NAME_RULE}",
            shown()
        )));
    }
    if !(first.is_ascii_alphabetic() || first == '_') {
        return Err(SecretsError::BadName(format!(
            "secret name {:?} starts with {first:?}; {NAME_RULE}",
            shown()
        )));
    }
    if name.len() > MAX_NAME_LEN {
        return Err(SecretsError::BadName(format!(
            "secret name {:?} is {} characters long; {NAME_RULE}",
            shown(),
            name.len()
        )));
    }
    Ok(())
}

/// Refuses a value outside the rules. The message never holds the value.
pub fn check_value(value: &str) -> Result<(), SecretsError> {
    if value.is_empty() {
        return Err(SecretsError::BadValue(format!(
            "the secret's value is empty; a value is {MIN_VALUE_BYTES} bytes to {MAX_VALUE_BYTES} \
             bytes (64 KiB) of text (to remove a secret, delete it)"
        )));
    }
    if value.len() < MIN_VALUE_BYTES {
        return Err(SecretsError::BadValue(format!(
            "the secret's value is {} bytes; a value is at least {MIN_VALUE_BYTES} bytes (every \
             occurrence of it is redacted from logs and outputs, so a shorter one would take \
             common text out of them)",
            value.len()
        )));
    }
    if value.len() > MAX_VALUE_BYTES {
        return Err(SecretsError::BadValue(format!(
            "the secret's value is {} bytes; a value is at most {MAX_VALUE_BYTES} bytes (64 KiB) \
             of text",
            value.len()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_like_environment_variables() {
        for ok in [
            "STRIPE_KEY",
            "_x",
            "a",
            "db.password",
            "api-key-2",
            &"A".repeat(64),
        ] {
            assert!(check_name(ok).is_ok(), "{ok}");
        }
        for (bad, says) in [
            ("", "is empty"),
            ("1KEY", "starts with '1'"),
            ("-x", "starts with '-'"),
            (".x", "starts with '.'"),
            ("A B", "has ' ' at byte 1"),
            ("ключ", "has 'к' at byte 0"),
            ("a/b", "has '/' at byte 1"),
            ("a\0b", "has '\\0' at byte 1"),
            (&"A".repeat(65), "is 65 characters long"),
        ] {
            let err = check_name(bad).unwrap_err().to_string();
            assert!(err.contains(says), "{bad:?}: {err}");
            assert!(err.contains("like STRIPE_KEY"), "{err}");
        }
        // A long bad name is cut in the message.
        let err = check_name(&format!("{}!", "a".repeat(10_000))).unwrap_err();
        assert!(err.to_string().len() < 400, "{err}");
    }

    #[test]
    fn values_are_text_of_8_bytes_up_to_64_kib() {
        assert!(check_value("12345678").is_ok());
        let err = check_value("1234567").unwrap_err().to_string();
        assert!(
            err.contains("7 bytes") && err.contains("at least 8"),
            "{err}"
        );
        assert!(check_value(&"x".repeat(MAX_VALUE_BYTES)).is_ok());
        let err = check_value("").unwrap_err().to_string();
        assert!(err.contains("is empty"), "{err}");
        let big = "é".repeat(MAX_VALUE_BYTES / 2 + 1);
        let err = check_value(&big).unwrap_err().to_string();
        assert!(
            err.contains("65538 bytes") && err.contains("at most 65536"),
            "{err}"
        );
        assert!(!err.contains('é'), "the value is not in the message");
    }
}
