//! ctxgraph's servers for agent hosts, over one set of typed operations.
//!
//! - [`rpc`]: `ctxgraph serve --stdio`, JSON-RPC 2.0 over newline-delimited JSON.
//! - [`mcp`]: `ctxgraph mcp`, the Model Context Protocol over stdio (the official SDK,
//!   `rmcp`), reading its lines through [`rpc`]'s framing.
//!
//! Both call the operations of [`ops::Host`] with the typed requests of [`protocol`] and
//! answer their typed replies; [`protocol::METHODS`] says which MCP tool each JSON-RPC
//! method is, and docs/protocol.md is generated from those types (`server/tests/protocol_doc.rs`);
//! `server/tests/reply_schemas.rs` checks real replies against the page's schemas.
//! The servers are built on the engine's API alone (`ctxgraph_engine`).

#![warn(missing_docs)]

pub mod mcp;
pub mod ops;
pub mod protocol;
pub mod render;
pub mod rpc;
