//! Every agent's view: `explain --agent codex|gemini|all` and `lint --agent codex|gemini|all`.

use std::path::PathBuf;
use std::process::ExitCode;

use ctxgraph_engine::{EngineError, HostEnv};
use ctxgraph_server::ops;
use ctxgraph_server::protocol::ExplainReply;
use ctxgraph_server::render::profile::{fates_text, files_text};

use crate::args::{ExplainArgs, ExplainFormat};
use crate::error::CliError;
use crate::output::write_stdout;
use crate::render;

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
    let reply = ops::explain_fates(&engine, ws, args.agent.one(), target)?;
    let out = match (args.format, &reply) {
        (ExplainFormat::Json, _) => render::json(&reply)?,
        (_, ExplainReply::File(file, fates)) => fates_text(file, fates),
        (_, ExplainReply::Files(files)) => files_text(files),
        // explain_fates answers only the two above.
        (_, ExplainReply::Workspace(_) | ExplainReply::Target(_)) => unreachable!("not a fates reply"),
    };
    write_stdout(out.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

fn absolute(target: &str) -> Result<PathBuf, CliError> {
    let base = std::env::current_dir()
        .map_err(|err| EngineError::WorkingDirectory { path: PathBuf::from("."), reason: err.to_string() })?;
    Ok(ctxgraph_db::path::resolve(&base, target))
}
