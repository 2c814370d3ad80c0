//! The base of ctxgraph's query layer, in the manner of `ruff_db`: the salsa [`Db`] trait and
//! the inputs every profile reads (files through [`System`], the [`Host`]
//! environment, remote documents, MCP servers, the opencode installation), with the helpers
//! and the one profile shape that every agent's crate shares. This crate does no I/O of its
//! own: the engine implements [`Db`] and sets the inputs.

#![warn(missing_docs)]

pub mod agent;
pub mod collate;
// Every item here is documented, but salsa's input macro generates public functions
// (constructors, builders) that carry no docs and cannot be given any.
#[allow(missing_docs)]
pub mod db;
pub mod fault;
pub mod files;
pub mod hash;
pub mod installation;
pub mod js;
pub mod js_literals;
pub mod jsonc;
pub mod lines;
pub mod lint;
pub mod mcp;
pub mod path;
pub mod profile;
pub mod project_files;
pub mod remote;
#[cfg(feature = "schema")]
pub mod schema;
pub mod secrets;
pub mod session_costs;
pub mod settings;
pub mod system;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod tokens;
pub mod worktree;

pub use db::{Host, Workspace};

use files::Files;
use remote::RemoteDocs;
use system::System;

/// What every query can reach: the file system (only through [`System`]) and the side
/// tables that map paths to their [`File`](crate::files::File) inputs and URLs to their
/// [`RemoteDoc`](crate::remote::RemoteDoc) inputs.
#[salsa::db]
pub trait Db: salsa::Database {
    /// The file system, real or in memory: the only way a query reaches it.
    fn system(&self) -> &dyn System;
    /// The path → [`File`](crate::files::File) input table.
    fn files(&self) -> &Files;
    /// The URL → [`RemoteDoc`](crate::remote::RemoteDoc) input table.
    fn remotes(&self) -> &RemoteDocs;
    /// The opencode installation whose own texts the message contains (L1–L3).
    fn installation(&self) -> crate::installation::Installation;
}
