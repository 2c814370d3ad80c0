//! The memory store under contention: one integration-test binary for the crate, one module
//! per area (each `tests/*.rs` file would be its own binary, linked against the whole
//! dependency tree). Add a module here rather than a file beside `it/`. The offline
//! evaluation, which recalls through an engine, is the engine's (`memory_evaluation`).

mod crash;
