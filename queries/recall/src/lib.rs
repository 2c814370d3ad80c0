//! ctxgraph's workspace memory as queries (docs/memory.md §3, §10–§11): what the store's
//! files hold and what recall makes of them, with no I/O of its own.
//!
//! The store itself (the lock, the appends, compaction, the extraction client) is
//! `ctxgraph-memory`, which writes the files these modules read. Kept apart so that the
//! query crates that recall (opencode) do not link the store's runtime, HTTP client and
//! file locking.

pub mod rank;
pub mod recall;
pub mod record;
pub mod render;
pub mod tokenize;
