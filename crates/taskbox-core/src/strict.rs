//! Serde helpers that refuse a JSON array where an object is meant. Serde's
//! derive reads a struct from an object *or* from an array of its fields in
//! order, so `{"quotas": [null, 5]}` would set a quota by its position: a
//! request the API's spec calls malformed must be refused as one.

use serde::de::{DeserializeOwned, Error};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

/// Reads `T` from an object, naming the field at fault inside it.
fn from_object<T: DeserializeOwned, E: Error>(map: Map<String, Value>) -> Result<T, E> {
    serde_path_to_error::deserialize(Value::Object(map)).map_err(|e| {
        match e.path().to_string().as_str() {
            "." => E::custom(e.into_inner()),
            path => E::custom(format!("{path}: {}", e.into_inner())),
        }
    })
}

/// An object, read as `T`.
pub fn object<'de, D: Deserializer<'de>, T: DeserializeOwned>(d: D) -> Result<T, D::Error> {
    from_object(Map::deserialize(d)?)
}

/// An object read as `T`, or null (or absent, with `#[serde(default)]`).
pub fn optional_object<'de, D: Deserializer<'de>, T: DeserializeOwned>(
    d: D,
) -> Result<Option<T>, D::Error> {
    Option::<Map<String, Value>>::deserialize(d)?
        .map(from_object)
        .transpose()
}

/// An array of objects, each read as `T`.
pub fn objects<'de, D: Deserializer<'de>, T: DeserializeOwned>(d: D) -> Result<Vec<T>, D::Error> {
    Vec::<Map<String, Value>>::deserialize(d)?
        .into_iter()
        .enumerate()
        .map(|(i, m)| {
            from_object(m).map_err(|e: serde_json::Error| D::Error::custom(format!("[{i}]: {e}")))
        })
        .collect()
}

/// Whether JSON text is an object (what every request body is).
pub fn is_object(text: &[u8]) -> bool {
    text.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Inner {
        #[serde(default)]
        a: Option<u32>,
        #[serde(default)]
        b: Option<u32>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Outer {
        #[serde(default, deserialize_with = "optional_object")]
        inner: Option<Inner>,
        #[serde(default, deserialize_with = "objects")]
        many: Vec<Inner>,
    }

    #[test]
    fn an_object_is_read_and_an_array_in_its_place_refused() {
        let o: Outer = serde_json::from_str(r#"{"inner": {"b": 2}, "many": [{"a": 1}]}"#).unwrap();
        assert_eq!(
            o.inner,
            Some(Inner {
                a: None,
                b: Some(2)
            })
        );
        assert_eq!(
            o.many,
            [Inner {
                a: Some(1),
                b: None
            }]
        );
        let o: Outer = serde_json::from_str(r#"{"inner": null}"#).unwrap();
        assert_eq!(o.inner, None);
        // What serde's derive alone would take, positionally.
        assert!(serde_json::from_str::<Inner>("[null, 5]").is_ok());
        let e = serde_json::from_str::<Outer>(r#"{"inner": {"b": -1}}"#).unwrap_err();
        assert!(e.to_string().starts_with("b: invalid value"), "{e}");
        for text in [
            r#"{"inner": [null, 5]}"#,
            r#"{"many": [[1, 2]]}"#,
            r#"{"many": {}}"#,
        ] {
            assert!(serde_json::from_str::<Outer>(text).is_err(), "{text}");
        }
    }

    #[test]
    fn a_body_is_an_object() {
        assert!(is_object(b" \n{\"a\": 1}"));
        assert!(!is_object(b"[1]"));
        assert!(!is_object(b"  "));
        assert!(!is_object(b"null"));
    }
}
