//! Schema-only types: how a value whose Rust type has no schema of its own (or not the one
//! its serde form has) is written, for `#[schemars(with = …)]` on the fields that hold it.

/// A byte range, `Range<usize>` as serde writes it: `start` and `end`, flattened into the
/// value that holds it or an object of its own.
#[derive(schemars::JsonSchema)]
pub struct ByteRange {
    /// The first byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}
