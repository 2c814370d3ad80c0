//! `ctxgraph lsp`: the language server, on the process's engine.

use std::process::ExitCode;

use ctxgraph_engine::Engine;

use crate::error::CliError;

pub fn run() -> Result<ExitCode, CliError> {
    ctxgraph_lsp::run_stdio(Engine::from_process()).map_err(CliError::Lsp)?;
    Ok(ExitCode::SUCCESS)
}
