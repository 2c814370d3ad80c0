//! Properties of the query layer's pure parts: one integration-test binary for the crate,
//! one module per area (each `tests/*.rs` file would be its own binary, linked against the
//! whole dependency tree). Add a module here rather than a file beside `it/`.

mod merge_laws;
