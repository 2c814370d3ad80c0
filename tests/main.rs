//! The conformance suite: one test binary for the crate, one module per kind of evidence.
//! Each separate test target would be its own binary, linked against the whole dependency
//! tree; one binary links once. Add a module here rather than a new `[[test]]` target.
//!
//! The harness that lays the recorded cases out is the crate's library (`lib.rs`). insta
//! snapshots sit in `snapshots/` beside each module, named `it__<module>__<name>.snap`,
//! except the conformance snapshots, which `oracle/record.sh` writes to the repository's
//! `snapshots/` under names of its own.

mod agents;
mod config;
mod conformance;
mod explain_agrees;
mod layout;
mod message;
mod opencode_agents;
mod opencode_blocks;
mod queries;
mod rule_ids;
mod session;
mod session_rules;
mod skills;
