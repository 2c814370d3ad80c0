//! `ctxgraph session compact|messages`: what opencode does next in a recorded session.

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use ctxgraph_db::Workspace;
use ctxgraph_engine::{Engine, EngineError, LimitOverrides};
use ctxgraph_opencode::session::Session;
use ctxgraph_opencode::session::compaction::CompactionPlan;
use serde_json::json;

use crate::args::{CompactArgs, Format, MessagesArgs, SessionArgs, SessionCommand, SessionInput};
use crate::error::CliError;
use crate::output::write_verbatim;

pub fn run(args: SessionArgs) -> Result<ExitCode, CliError> {
    match args.command {
        SessionCommand::Compact(args) => compact(args),
        SessionCommand::Messages(args) => messages(args),
    }
}

fn compact(args: CompactArgs) -> Result<ExitCode, CliError> {
    let template = args.template.as_deref().map(read_text).transpose()?;
    let (engine, ws, session) = open(&args.session)?;
    let overrides =
        LimitOverrides { context: args.limits.context, input: args.limits.input, output: args.limits.output };
    let params = engine.plan_params(ws, session, overrides)?;
    let plan = engine.compaction_plan(session, params);
    let request = engine.summary_request(plan, template.as_deref());
    let out = match args.format {
        Format::Json => {
            let mut value = serde_json::to_value(plan).map_err(internal)?;
            value["request"] = request.into();
            pretty(&value)?
        }
        Format::Text => text(plan, &request),
    };
    // The messages kept and the summary request: what the agent sends, shown as it is.
    write_verbatim(out.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

fn messages(args: MessagesArgs) -> Result<ExitCode, CliError> {
    let (engine, _, session) = open(&args.session)?;
    let messages = engine.next_messages(session)?;
    let out = match args.format {
        Format::Json => pretty(&json!(messages))?,
        Format::Text => {
            let mut out = String::new();
            for message in &messages {
                let _ = writeln!(out, "{}", serde_json::to_string(message).map_err(internal)?);
            }
            out
        }
    };
    // The next request's messages: what the agent sends, shown as it is.
    write_verbatim(out.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// The engine, the workspace and the session loaded from `--session`.
pub(super) fn open(input: &SessionInput) -> Result<(Engine, Workspace, Session), CliError> {
    let bytes = read_bytes(&input.session)?;
    let (mut engine, ws, _) = super::open_configured(input.cwd.clone(), &input.remote)?;
    let name = if input.session == Path::new("-") {
        "<stdin>".to_owned()
    } else {
        input.session.display().to_string()
    };
    let session = engine.load_session(&name, &bytes)?;
    Ok((engine, ws, session))
}

fn read_bytes(path: &Path) -> Result<Vec<u8>, CliError> {
    super::read_input_bytes(path).map_err(|err| {
        CliError::Engine(EngineError::ReadTarget { path: path.to_path_buf(), reason: err.to_string() })
    })
}

fn read_text(path: &Path) -> Result<String, CliError> {
    String::from_utf8(read_bytes(path)?).map_err(|err| {
        CliError::Engine(EngineError::ReadTarget {
            path: path.to_path_buf(),
            reason: format!("not UTF-8 (byte {})", err.utf8_error().valid_up_to()),
        })
    })
}

fn pretty(value: &serde_json::Value) -> Result<String, CliError> {
    let mut out = serde_json::to_string_pretty(value).map_err(internal)?;
    out.push('\n');
    Ok(out)
}

fn internal(err: serde_json::Error) -> CliError {
    CliError::Output(std::io::Error::other(err))
}

fn text(plan: &CompactionPlan, request: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "usable window: {} tokens (tail budget {})", plan.usable, plan.budget);
    match plan.tokens {
        Some(tokens) => {
            let verdict = if plan.overflow { "overflow: the next step compacts" } else { "fits" };
            let _ = writeln!(out, "last step: {tokens} tokens, {verdict}");
        }
        None => {
            let _ = writeln!(out, "last step: no finished assistant message");
        }
    }
    if let Some(marker) = &plan.marker {
        let _ = writeln!(out, "pending compaction: {marker}");
    }
    if let Some(replay) = &plan.replay {
        let _ = writeln!(out, "replayed after compaction: {replay}");
    }
    let _ = writeln!(out, "turns, newest first:");
    for turn in &plan.turns {
        let _ = writeln!(out, "  {} {} tokens, {}", turn.id, turn.tokens, turn.verdict());
    }
    if let Some(id) = &plan.tail_start_id {
        let _ = writeln!(out, "tail starts at {id}; {} message(s) summarised", plan.head.len());
    } else {
        let why = plan.no_tail_reason().unwrap_or_default();
        let _ = writeln!(out, "no tail ({why}): all {} message(s) summarised", plan.head.len());
    }
    if plan.prune.enabled {
        let _ = writeln!(
            out,
            "prune: {} tokens of tool output, {} past the protected 40000; marks {} part(s)",
            plan.prune.total,
            plan.prune.candidates,
            plan.pruned.len()
        );
    }
    let _ = writeln!(out, "\n--- compaction request ---\n{request}");
    out
}
