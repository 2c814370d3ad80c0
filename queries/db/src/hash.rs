//! The content hash every output reports.

use serde::Serialize;

/// blake3 of some text, as 64 hex digits: the hash every output reports (displays may
/// abbreviate it).
pub fn content_hash(text: &str) -> String {
    ContentHash::of(text).to_string()
}

/// blake3 of some text, kept as its 32 bytes; displayed and serialized as the 64 hex
/// digits [`content_hash`] returns.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ContentHash(blake3::Hash);

impl ContentHash {
    /// The hash of `text`'s bytes.
    pub fn of(text: &str) -> Self {
        ContentHash(blake3::hash(text.as_bytes()))
    }
}

impl std::fmt::Display for ContentHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.to_hex())
    }
}

impl std::fmt::Debug for ContentHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

/// Serialised as its lowercase hex digits, so its schema is that string.
#[cfg(feature = "schema")]
impl schemars::JsonSchema for ContentHash {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ContentHash".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "blake3 of the bytes, in lowercase hex.",
            "type": "string",
            "pattern": "^[0-9a-f]{64}$",
        })
    }
}

impl Serialize for ContentHash {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0.to_hex())
    }
}
