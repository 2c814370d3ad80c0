//! Turning the library's answers into text, JSON, DOT and SARIF. No decisions are made
//! here: every fact and sentence comes from the engine's answers (the query crates'
//! plain data, `ctxgraph_engine::answers`).

pub mod dot;
pub mod sarif;

pub use ctxgraph_server::render::{explain, lint};
use serde::Serialize;

use crate::error::CliError;

/// Pretty JSON with a final newline, every string redacted (each string alone: a secret
/// at the start of a text is found there, not after a JSON escape).
pub fn json(value: &impl Serialize) -> Result<String, CliError> {
    let mut value = serde_json::to_value(value).map_err(|e| CliError::Output(e.into()))?;
    ctxgraph_db::secrets::redactor().json(&mut value);
    let mut json = serde_json::to_string_pretty(&value).map_err(|e| CliError::Output(e.into()))?;
    json.push('\n');
    Ok(json)
}
