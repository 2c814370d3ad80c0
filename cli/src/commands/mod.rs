//! One module per subcommand.

use std::path::PathBuf;
use std::process::ExitCode;

use std::sync::Arc;
use std::time::Duration;

use ctxgraph_db::Workspace;
use ctxgraph_engine::mcp::McpConnector;
use ctxgraph_engine::remote::{FetchOptions, Fetcher};
use ctxgraph_engine::{Engine, EngineError, HostEnv, OsSystem, Policy, RemoteRefresh};

use crate::args::{Cli, Command, RemoteArgs};
use crate::error::CliError;

mod build;
mod check;
mod check_text;
mod config;
mod explain;
mod github;
mod hook;
mod lint;
mod lsp;
mod mcp;
pub mod memory;
mod nearby;
mod profiles;
mod report;
mod serve;
mod session;
mod snapshot;
mod watch;

pub fn run(cli: Cli) -> Result<ExitCode, CliError> {
    crate::panic::panic_if_testing();
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
        Command::Session(args) => session::run(args),
        Command::Completions(args) => completions(args.shell),
        Command::Memory(args) => memory::run(args),
        Command::Mcp(args) => mcp::run(args),
        Command::Report(args) => report::run(args),
        Command::Lsp(_) => lsp::run(),
        Command::Hook(args) => hook::run(args),
    }
}

/// `ctxgraph completions SHELL`: the script `clap_complete` generates from the arguments.
fn completions(shell: clap_complete::Shell) -> Result<ExitCode, CliError> {
    use clap::CommandFactory;
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "ctxgraph", &mut script);
    crate::output::write_stdout(&script)?;
    Ok(ExitCode::SUCCESS)
}

/// The engine over this process and the workspace for `--cwd` (default: the current
/// directory), with what `agent`'s rules wait on to be read (opencode's remote org config,
/// named by its auth store, R1–R4: fetched first, as opencode does before anything else).
fn open_configured(
    cwd: Option<PathBuf>,
    remote: &RemoteArgs,
    agent: ctxgraph_db::agent::Agent,
) -> Result<(Engine, Workspace, FetchOptions), CliError> {
    let env = HostEnv::from_process();
    let options = fetch_options(remote, &env);
    let (mut engine, ws) = open_with(env, cwd)?;
    let policy = Policy::config_only(options.clone());
    prepare_agent(&mut engine, ws, agent, ctxgraph_db::profile::Section::Rules, &policy)?;
    Ok((engine, ws, options))
}

/// [`Engine::prepare_agent`]: what `agent`'s `section` waits on outside the file system,
/// each warning on stderr.
fn prepare_agent(
    engine: &mut Engine,
    ws: Workspace,
    agent: ctxgraph_db::agent::Agent,
    section: ctxgraph_db::profile::Section,
    policy: &Policy,
) -> Result<(), CliError> {
    let prepared = engine.prepare_agent(ws, agent, section, policy)?;
    warned(&prepared, policy)
}

/// Each warning on stderr; with `--strict`, the first one is an error.
fn warned(prepared: &ctxgraph_engine::Prepared, policy: &Policy) -> Result<(), CliError> {
    warn(prepared);
    if policy.fetch.strict {
        prepared.strict()?;
    }
    Ok(())
}

/// What preparing found wrong, each on stderr.
fn warn(prepared: &ctxgraph_engine::Prepared) {
    for warning in &prepared.warnings {
        crate::output::eprintln_styled(&format!("warning: {warning}"));
    }
}

/// What a command loads outside the file system, as its flags say: remote documents, and
/// MCP servers unless `--no-mcp`; what the agent's answer waits on decides the rest.
fn policy(args: &RemoteArgs, env: &HostEnv) -> Policy {
    Policy { fetch: fetch_options(args, env), remote: true, mcp: !args.no_mcp }
}

fn fetch_options(args: &RemoteArgs, env: &HostEnv) -> FetchOptions {
    FetchOptions {
        header_timeout: Duration::from_millis(args.remote_timeout_ms),
        body_timeout: Duration::from_millis(args.remote_body_timeout_ms),
        max_body_bytes: args.remote_max_bytes,
        offline: args.offline,
        strict: args.strict,
        cache_dir: Some(env.remote_cache_dir()),
        ..FetchOptions::default()
    }
}

/// What keeps remote documents loaded for `serve` and `watch`.
fn remote_refresh(options: FetchOptions, every_secs: u64, no_mcp: bool) -> Result<RemoteRefresh, CliError> {
    let fetcher = Fetcher::new(options).map_err(EngineError::from)?;
    let refresh = RemoteRefresh::new(fetcher, Duration::from_secs(every_secs));
    if no_mcp {
        return Ok(refresh);
    }
    Ok(refresh.with_mcp(McpConnector::new().map_err(EngineError::from)?))
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

/// A file named on the command line (an `opencode export`, a handoff, a tool's output), or
/// stdin for `-`. A path must be a regular file (a FIFO could block forever, a device
/// stream forever) within the engine's size limit; stdin is read up to that limit.
pub(crate) fn read_input_bytes(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read as _;
    if path != std::path::Path::new("-") {
        return ctxgraph_engine::read_regular_file(path);
    }
    let mut bytes = Vec::new();
    std::io::stdin().lock().take(ctxgraph_engine::MAX_FILE_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > ctxgraph_engine::MAX_FILE_BYTES {
        return Err(std::io::Error::new(
            std::io::ErrorKind::FileTooLarge,
            format!("stdin holds more than ctxgraph's limit of {} bytes", ctxgraph_engine::MAX_FILE_BYTES),
        ));
    }
    Ok(bytes)
}
