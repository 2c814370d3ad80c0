//! Test helpers shared by every ctxgraph test crate (a dev-dependency only). It depends on
//! ctxgraph-db alone, so that every crate above the database may use it without a
//! dev-dependency pointing up the crate graph (tests/layout.rs); what needs an engine lives
//! with the engine's tests or in the tests crate.
//!
//! - [`fixture`]: a whole world in one string (`//- /repo/AGENTS.md` headers, rust-analyzer
//!   style), laid out in a `MemorySystem` (the tests crate's `queries::check` renders what the
//!   queries make of it, for one-line data-driven tests with inline insta snapshots).
//! - [`tree`]: copying fixture directories (files, directories, symlinks) to memory or disk.
//! - [`sandbox`]: the fixed, locked directory whose path token counts depend on.
//! - [`http`]: a scripted HTTP/1.1 server on 127.0.0.1, bounded in connections and time.
//! - [`opencode`], [`copilot`], [`qwen_code`], [`aider`], [`pi`]: the real packages, installed from npm
//!   (Aider: the Python package index, into a virtual environment) once, for tests that read their texts.
//! - [`monorepo`]: the benchmarks' synthetic monorepo (up to 100 000 files) on disk.

// A helper that cannot set up its fixture fails the test that called it: panicking is its
// contract, not an edge case to document on each function.
#![warn(missing_docs)]
#![allow(clippy::missing_panics_doc)]

pub mod aider;
pub mod auggie;
pub mod copilot;
pub mod debian;
pub mod fixture;
pub mod http;
pub mod monorepo;
pub mod opencode;
pub mod pi;
pub mod pip;
pub mod precommit;
pub mod qwen_code;
pub mod sandbox;
pub mod tree;
