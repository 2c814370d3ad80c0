//! One module per subcommand.

use std::path::PathBuf;
use std::process::ExitCode;

use std::sync::Arc;

use ctxgraph_engine::{Engine, EngineError, HostEnv, OsSystem};
use ctxgraph_queries::Workspace;

use crate::args::{Cli, Command};
use crate::error::CliError;

mod build;
mod check;
mod config;
mod explain;
mod github;
mod lint;
mod nearby;
mod serve;
mod snapshot;
mod watch;

pub fn run(cli: Cli) -> Result<ExitCode, CliError> {
    match cli.command {
        Command::Build(args) => build::run(args),
        Command::Nearby(args) => nearby::run(args),
        Command::Explain(args) => explain::run(args),
        Command::Lint(args) => lint::run(args),
        Command::Snapshot(args) => snapshot::run(args),
        Command::Check(args) => check::run(args),
        Command::InitCheck(args) => snapshot::init(args.scenarios),
        Command::Watch(args) => watch::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Config(args) => config::run(args),
    }
}

/// The engine over this process, and the workspace for `--cwd` (default: the current
/// directory).
fn open(cwd: Option<PathBuf>) -> Result<(Engine, Workspace), CliError> {
    open_with(HostEnv::from_process(), cwd)
}

fn open_with(env: HostEnv, cwd: Option<PathBuf>) -> Result<(Engine, Workspace), CliError> {
    let cwd = match cwd {
        Some(cwd) => cwd,
        None => std::env::current_dir().map_err(|err| EngineError::WorkingDirectory {
            path: PathBuf::from("."),
            reason: err.to_string(),
        })?,
    };
    let mut engine = Engine::new(Arc::new(OsSystem), env);
    let ws = engine.open(&cwd)?;
    Ok((engine, ws))
}

/// R1–R4: fetches the remote org config the workspace's auth store names, before
/// anything reads the config (opencode loads it first and aborts when it fails).
fn load_remote_config(
    engine: &mut Engine,
    ws: Workspace,
    options: &ctxgraph_engine::remote::FetchOptions,
) -> Result<(), CliError> {
    if engine.config_requests(ws).is_empty() {
        return Ok(());
    }
    let fetcher = ctxgraph_engine::remote::Fetcher::new(options.clone()).map_err(EngineError::from)?;
    engine.fetch_config(ws, &fetcher)?;
    Ok(())
}
