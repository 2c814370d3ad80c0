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
    if let Some(record) = &args.session {
        return session(&args, record);
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

/// `explain --session` for an agent whose sessions are read from its own record: why each
/// rule-like file joined or left each request (and with a FILE, what a Read of it attaches at
/// the next step).
fn session(args: &ExplainArgs, record: &std::path::Path) -> Result<ExitCode, CliError> {
    let Some(agent) = args.agent.one() else {
        return Err(CliError::Usage("--session explains one agent's session; name it with --agent".into()));
    };
    if matches!(args.format, ExplainFormat::Dot) || args.message.is_some() {
        return Err(CliError::Usage(format!("--session for {agent}: text or json, without --message")));
    }
    let (engine, ws) = super::open_with(HostEnv::from_process(), args.cwd.clone())?;
    let record = absolute(&record.to_string_lossy())?;
    let costs = engine.session_costs(ws, agent, &record)?;
    let read = match args.target.as_deref() {
        Some(target) => {
            let request = ctxgraph_db::profile::Request::default();
            Some(engine.agent_read_in_session(ws, agent, &absolute(target)?, &request, &record)?)
        }
        None => None,
    };
    let out = match args.format {
        ExplainFormat::Json => {
            let mut value = serde_json::to_value(&costs).map_err(|e| CliError::Output(e.into()))?;
            if let Some(read) = &read {
                value["next_read"] = serde_json::to_value(ctxgraph_server::render::profile::ReadView::new(
                    &ctxgraph_engine::ReadAnswer { layout: read.clone(), opencode: None },
                ))
                .map_err(|e| CliError::Output(e.into()))?;
            }
            render::json(&value)?
        }
        _ => session_text(&costs, read.as_ref()),
    };
    write_stdout(out.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

fn session_text(
    costs: &ctxgraph_engine::answers::profile::SessionCosts,
    read: Option<&ctxgraph_engine::answers::profile::ReadLayout>,
) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    for (index, step) in costs.steps.iter().enumerate() {
        let compacted = if step.after_compaction { " (after compaction)" } else { "" };
        let bytes: u64 = step.files.iter().map(|f| f.bytes).sum();
        let _ = writeln!(out, "step {}{compacted}: {bytes} bytes of rule-like files", index + 1);
        for why in &step.why {
            reason_line(&mut out, "", &ctxgraph_engine::answers::display(&why.path), why.rule, &why.reason);
        }
    }
    if let Some(read) = read {
        let _ =
            writeln!(out, "\na Read of {} at the next step:", ctxgraph_engine::answers::display(&read.file));
        if read.blocks.is_empty() {
            let _ = writeln!(out, "  attaches nothing");
        }
        for block in &read.blocks {
            reason_line(&mut out, "", &block.source.display(), block.rule, &block.reason);
        }
        for left in &read.left_out {
            let path = ctxgraph_engine::answers::display(&left.source);
            reason_line(&mut out, "not attached: ", &path, left.rule, &left.reason);
        }
    }
    out
}

fn reason_line(out: &mut String, lead: &str, path: &str, rule: &str, reason: &str) {
    use std::fmt::Write as _;
    let _ = writeln!(out, "  {lead}{path} [{rule}]: {reason}");
}

fn absolute(target: &str) -> Result<PathBuf, CliError> {
    let base = std::env::current_dir()
        .map_err(|err| EngineError::WorkingDirectory { path: PathBuf::from("."), reason: err.to_string() })?;
    Ok(ctxgraph_db::path::resolve(&base, target))
}
