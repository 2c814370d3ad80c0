//! `ctxgraph lsp`: the language server, on the process's engine.

use std::process::ExitCode;

use ctxgraph_engine::Engine;
use ctxgraph_lsp::Stop;

use crate::error::CliError;

pub fn run() -> Result<ExitCode, CliError> {
    match ctxgraph_lsp::run_stdio(Engine::from_process()).map_err(CliError::Lsp)? {
        Stop::Clean => Ok(ExitCode::SUCCESS),
        // The protocol's rule for an `exit` that no `shutdown` came before.
        Stop::ExitWithoutShutdown => Ok(ExitCode::from(1)),
    }
}
