//! One module per subcommand.

use std::path::PathBuf;
use std::process::ExitCode;

use ctxgraph_engine::{Engine, EngineError};
use ctxgraph_queries::Workspace;

use crate::args::{Cli, Command};
use crate::error::CliError;

mod build;
mod explain;
mod lint;
mod nearby;

pub fn run(cli: Cli) -> Result<ExitCode, CliError> {
    match cli.command {
        Command::Build(args) => build::run(args),
        Command::Nearby(args) => nearby::run(args),
        Command::Explain(args) => explain::run(args),
        Command::Lint(args) => lint::run(args),
    }
}

/// The engine over this process, and the workspace for `--cwd` (default: the current
/// directory).
fn open(cwd: Option<PathBuf>) -> Result<(Engine, Workspace), CliError> {
    let cwd = match cwd {
        Some(cwd) => cwd,
        None => std::env::current_dir().map_err(|err| EngineError::WorkingDirectory {
            path: PathBuf::from("."),
            reason: err.to_string(),
        })?,
    };
    let mut engine = Engine::from_process();
    let ws = engine.open(&cwd)?;
    Ok((engine, ws))
}
