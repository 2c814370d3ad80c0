//! Every agent's view: `explain --agent codex|gemini|all` and `lint --agent codex|gemini|all`.

use std::path::PathBuf;
use std::process::ExitCode;

use ctxgraph_db::Workspace;
use ctxgraph_db::agent::Agent;
use ctxgraph_db::profile::Request;
use ctxgraph_engine::{Engine, EngineError, HostEnv};
use serde::Serialize;

use ctxgraph_server::render::profile::{FileFates, fates_text};

use crate::args::{ExplainArgs, ExplainFormat};
use crate::error::CliError;
use crate::output::write_stdout;

/// `explain --agent A [FILE]` for the agents other than opencode, and `--agent all FILE`.
pub fn explain(args: ExplainArgs) -> Result<ExitCode, CliError> {
    if args.session.is_some() {
        return Err(CliError::Usage(
            "--session explains an opencode session; use it with --agent opencode".into(),
        ));
    }
    if matches!(args.format, ExplainFormat::Dot) {
        return Err(CliError::Usage(
            "--format dot draws opencode's discovery graph; use text or json".into(),
        ));
    }
    let (engine, ws) = super::open_with(HostEnv::from_process(), args.cwd.clone())?;
    let target = args.target.as_deref().map(absolute).transpose()?;
    let out = match (args.agent.one(), target) {
        (None, None) => {
            return Err(CliError::Usage(
                "explain --agent all compares one file across agents: give a FILE".into(),
            ));
        }
        (None, Some(path)) => {
            let fates = engine.file_fates(ws, &path);
            match args.format {
                ExplainFormat::Json => json(&FileFates { file: &path, agents: &fates })?,
                _ => fates_text(&path, &fates),
            }
        }
        (Some(agent), Some(path)) => {
            let fate = engine.file_fate(ws, agent, &path);
            match args.format {
                ExplainFormat::Json => json(&FileFates { file: &path, agents: std::slice::from_ref(&fate) })?,
                _ => fates_text(&path, std::slice::from_ref(&fate)),
            }
        }
        (Some(agent), None) => {
            let files = considered(&engine, ws, agent)?;
            let fates: Vec<_> =
                files.iter().map(|path| (path.as_path(), engine.file_fate(ws, agent, path))).collect();
            match args.format {
                ExplainFormat::Json => {
                    let files: Vec<FileFates<'_>> = fates
                        .iter()
                        .map(|(path, fate)| FileFates { file: path, agents: std::slice::from_ref(fate) })
                        .collect();
                    json(&files)?
                }
                _ => fates
                    .iter()
                    .map(|(path, fate)| fates_text(path, std::slice::from_ref(fate)))
                    .collect::<Vec<_>>()
                    .join("\n"),
            }
        }
    };
    write_stdout(out.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// Every file `agent` looked at from `ws` ([`Layout::considered`](ctxgraph_db::profile::Layout::considered)).
fn considered(engine: &Engine, ws: Workspace, agent: Agent) -> Result<Vec<PathBuf>, CliError> {
    if agent == Agent::Opencode {
        return Err(CliError::Usage("explain --agent opencode without FILE is plain `explain`".into()));
    }
    Ok(engine.agent_layout(ws, agent, &Request::default())?.considered())
}

fn absolute(target: &str) -> Result<PathBuf, CliError> {
    let base = std::env::current_dir()
        .map_err(|err| EngineError::WorkingDirectory { path: PathBuf::from("."), reason: err.to_string() })?;
    Ok(ctxgraph_db::path::resolve(&base, target))
}

fn json(value: &impl Serialize) -> Result<String, CliError> {
    let mut out = serde_json::to_string_pretty(value).map_err(|e| CliError::Output(e.into()))?;
    out.push('\n');
    Ok(out)
}
