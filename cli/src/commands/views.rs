//! Every agent's view: `explain --agent codex|gemini|all` and `lint --agent codex|gemini|all`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use ctxgraph_db::Workspace;
use ctxgraph_db::agent::Agent;
use ctxgraph_db::profile::AgentFate;
use ctxgraph_db::profile::Request;
use ctxgraph_engine::{Engine, EngineError, HostEnv};
use serde::Serialize;

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
                ExplainFormat::Json => json(&FileReport { file: &path, agents: &fates })?,
                _ => side_by_side(&path, &fates),
            }
        }
        (Some(agent), Some(path)) => {
            let fate = engine.file_fate(ws, agent, &path);
            match args.format {
                ExplainFormat::Json => {
                    json(&FileReport { file: &path, agents: std::slice::from_ref(&fate) })?
                }
                _ => side_by_side(&path, std::slice::from_ref(&fate)),
            }
        }
        (Some(agent), None) => {
            let files = considered(&engine, ws, agent)?;
            let fates: Vec<_> =
                files.iter().map(|path| (path.as_path(), engine.file_fate(ws, agent, path))).collect();
            match args.format {
                ExplainFormat::Json => {
                    let files: Vec<FileReport<'_>> = fates
                        .iter()
                        .map(|(path, fate)| FileReport { file: path, agents: std::slice::from_ref(fate) })
                        .collect();
                    json(&files)?
                }
                _ => fates
                    .iter()
                    .map(|(path, fate)| side_by_side(path, std::slice::from_ref(fate)))
                    .collect::<Vec<_>>()
                    .join("\n"),
            }
        }
    };
    write_stdout(out.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// Every file `agent` looked at from `ws`: the files it sends, in text order, each followed
/// by the files it inlines, then the files it left out.
fn considered(engine: &Engine, ws: Workspace, agent: Agent) -> Result<Vec<PathBuf>, CliError> {
    if agent == Agent::Opencode {
        return Err(CliError::Usage("explain --agent opencode without FILE is plain `explain`".into()));
    }
    let layout = engine.agent_layout(ws, agent, &Request::default())?;
    let mut files = Vec::new();
    for block in &layout.blocks {
        files.extend(block.source.path().map(Path::to_path_buf));
        files.extend(block.inlines.iter().cloned());
    }
    files.extend(layout.left_out.iter().map(|left| left.source.clone()));
    let mut seen = std::collections::HashSet::new();
    files.retain(|f| seen.insert(f.clone()));
    Ok(files)
}

fn absolute(target: &str) -> Result<PathBuf, CliError> {
    let base = std::env::current_dir()
        .map_err(|err| EngineError::WorkingDirectory { path: PathBuf::from("."), reason: err.to_string() })?;
    Ok(ctxgraph_db::path::resolve(&base, target))
}

#[derive(Serialize)]
struct FileReport<'a> {
    file: &'a Path,
    agents: &'a [AgentFate],
}

fn json(value: &impl Serialize) -> Result<String, CliError> {
    let mut out = serde_json::to_string_pretty(value).map_err(|e| CliError::Output(e.into()))?;
    out.push('\n');
    Ok(out)
}

/// The file, then one block per agent: its name, status and placement, and the reason.
fn side_by_side(path: &Path, fates: &[AgentFate]) -> String {
    let mut out = format!("{}\n", path.display());
    let width = fates.iter().map(|f| f.agent.len()).max().unwrap_or(0);
    for fate in fates {
        let _ = write!(out, "  {:width$}  {}", fate.agent, fate.status.label());
        if let Some(placement) = fate.placement {
            let _ = write!(out, " ({placement})");
        }
        let _ = writeln!(out, "\n  {:width$}  {}", "", fate.reason);
    }
    out
}
