//! `ctxgraph session compact|messages`: what opencode does next in a recorded session;
//! `ctxgraph session rules`: what each rule-like file cost over any modelled agent's session;
//! `explain --session`: either, explained.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use ctxgraph_db::Workspace;
use ctxgraph_db::agent::Agent;
use ctxgraph_engine::answers::profile::{FileCost, SessionCosts};
use ctxgraph_engine::answers::session::{CompactionPlan, ReadPoint, Session};
use ctxgraph_engine::profiles::{live_sessions_agent, profile};
use ctxgraph_engine::{Engine, EngineError, HostEnv, LimitOverrides, ReadAnswer};
use serde_json::json;

use crate::args::{
    CompactArgs, ExplainArgs, ExplainFormat, Format, MessagesArgs, NearbyArgs, RulesArgs, SessionArgs,
    SessionCommand, SessionInput,
};
use crate::error::CliError;
use crate::output::{escape_controls, write_json, write_stdout, write_verbatim};

pub fn run(args: SessionArgs) -> Result<ExitCode, CliError> {
    match args.command {
        SessionCommand::Compact(args) => compact(args),
        SessionCommand::Messages(args) => messages(args),
        SessionCommand::Rules(args) => rules(args),
    }
}

fn rules(args: RulesArgs) -> Result<ExitCode, CliError> {
    let (engine, ws) = super::open_with(HostEnv::from_process(), args.cwd)?;
    // Relative to where ctxgraph runs, as every file argument is (not to --cwd).
    let session = absolute(&args.session)?;
    let costs = engine.session_costs(ws, args.agent, &session)?;
    match args.format {
        Format::Json => write_json(&costs, &[])?,
        Format::Text => write_stdout(escape_controls(&rules_text(&costs), false).as_bytes())?,
    }
    Ok(ExitCode::SUCCESS)
}

/// One line per step (its totals, the files that joined or left since the step before), then
/// each file over the session, the savings and the notes. The same for every agent.
fn rules_text(costs: &SessionCosts) -> String {
    let mut out = String::new();
    let bytes: u64 = costs.total.iter().map(|f| f.bytes).sum();
    let tokens: u64 = costs.total.iter().map(|f| f.tokens).sum();
    let _ = writeln!(
        out,
        "{} step(s); rule-like files: {bytes} bytes, {tokens} tokens ({}) over the session",
        costs.steps.len(),
        costs.tokenizer
    );
    let mut before: Vec<&FileCost> = Vec::new();
    for (index, step) in costs.steps.iter().enumerate() {
        let bytes: u64 = step.files.iter().map(|f| f.bytes).sum();
        let tokens: u64 = step.files.iter().map(|f| f.tokens).sum();
        let compacted = if step.after_compaction { " (after compaction)" } else { "" };
        let _ = writeln!(
            out,
            "step {}{compacted}: {bytes} bytes, {tokens} tokens in {} file(s)",
            index + 1,
            step.files.len()
        );
        for file in &step.files {
            match before.iter().find(|b| b.path == file.path) {
                None => {
                    let _ = writeln!(
                        out,
                        "  + {} ({} bytes, {} tokens)",
                        display(&file.path),
                        file.bytes,
                        file.tokens
                    );
                }
                Some(b) if b.bytes != file.bytes => {
                    let _ = writeln!(
                        out,
                        "  ~ {} ({} bytes, {} tokens)",
                        display(&file.path),
                        file.bytes,
                        file.tokens
                    );
                }
                Some(_) => {}
            }
        }
        for gone in before.iter().filter(|b| !step.files.iter().any(|f| f.path == b.path)) {
            let _ = writeln!(out, "  - {}", display(&gone.path));
        }
        before = step.files.iter().collect();
    }
    let _ = writeln!(out, "\ntotal over the session:");
    for file in &costs.total {
        let _ = writeln!(out, "  {:>9} bytes {:>8} tokens  {}", file.bytes, file.tokens, display(&file.path));
    }
    if !costs.savings.is_empty() {
        let _ = writeln!(out, "\nsavings:");
        for saving in &costs.savings {
            let _ = writeln!(
                out,
                "  {}: {}: {} bytes, {} tokens ({})",
                display(&saving.path),
                saving.change,
                saving.bytes,
                saving.tokens,
                saving.how
            );
        }
    }
    for note in &costs.notes {
        let _ = writeln!(out, "\nnote: {note}");
    }
    out
}

fn display(path: &Path) -> String {
    ctxgraph_engine::answers::display(path)
}

fn compact(args: CompactArgs) -> Result<ExitCode, CliError> {
    let template = args.template.as_deref().map(read_text).transpose()?;
    let (engine, ws, session) = open(&args.session, live_sessions_agent())?;
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
    let (engine, _, session) = open(&args.session, live_sessions_agent())?;
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

/// The agent whose recorded session `report --session` shows as a timeline, with `agent`
/// (`None`: every agent): one whose sessions the engine holds live, as messages
/// ([`Profile::sessions_live`]); with no one agent named, the record is that agent's export,
/// as before other agents' records could be read.
///
/// [`Profile::sessions_live`]: ctxgraph_db::profile::Profile::sessions_live
pub(super) fn timeline_agent(agent: Option<Agent>) -> Option<Agent> {
    match agent {
        Some(agent) => profile(agent).sessions_live().then_some(agent),
        None => Some(live_sessions_agent()),
    }
}

/// The engine, the workspace and `agent`'s live session loaded from `--session`.
pub(super) fn open(input: &SessionInput, agent: Agent) -> Result<(Engine, Workspace, Session), CliError> {
    let bytes = read_bytes(&input.session)?;
    let (mut engine, ws, _) = super::open_configured(input.cwd.clone(), &input.remote, agent)?;
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

/// `nearby --session`: what a read of the file attaches at a point of a recorded session,
/// an opencode export's (`--message`, or its next step) or another agent's own record's
/// (its next step).
pub(super) fn read(
    args: &NearbyArgs,
    record: &Path,
    request: &ctxgraph_db::profile::Request,
) -> Result<ReadAnswer, CliError> {
    let agent = args.agent;
    if profile(agent).sessions_live() {
        let input = SessionInput {
            session: record.to_path_buf(),
            cwd: args.cwd.clone(),
            remote: args.remote.clone(),
        };
        let point = match &args.message {
            Some(id) => ReadPoint::InMessage { message: id.clone(), before_part: None },
            None => ReadPoint::NextStep,
        };
        let (engine, ws, session) = open(&input, agent)?;
        return Ok(engine.read(ws, agent, &args.file, request, Some((session, &point)))?);
    }
    if args.message.is_some() {
        return Err(CliError::Usage(format!(
            "--message is opencode's; {agent}'s session is read at its next step"
        )));
    }
    let (engine, ws) = super::open_with(HostEnv::from_process(), args.cwd.clone())?;
    let layout = engine.agent_read_in_session(ws, agent, &args.file, request, &absolute(record)?)?;
    Ok(ReadAnswer { layout, opencode: None })
}

/// `explain --session`: the session's reads and its next compaction, or (any other agent)
/// the agent's own record: why each rule-like file joined or left each request.
pub(super) fn explain(args: ExplainArgs) -> Result<ExitCode, CliError> {
    let Some(record) = args.session.clone() else { return Ok(ExitCode::SUCCESS) };
    match args.agent.one() {
        Some(agent) if profile(agent).sessions_live() => explain_export(args, agent, record),
        Some(agent) => explain_record(&args, agent, &record),
        None => Err(CliError::Usage("--session explains one agent's session; name it with --agent".into())),
    }
}

/// opencode's export: its reads, and its next compaction.
fn explain_export(args: ExplainArgs, agent: Agent, export: PathBuf) -> Result<ExitCode, CliError> {
    let input = SessionInput { session: export, cwd: args.cwd, remote: args.remote };
    let (mut engine, ws, session) = open(&input, agent)?;
    let overrides =
        LimitOverrides { context: args.limits.context, input: args.limits.input, output: args.limits.output };
    let file = args.target.as_deref().map(Path::new);
    let answer = engine.explain_session(ws, session, overrides, args.message.as_deref(), file)?;
    let out = match args.format {
        ExplainFormat::Text => crate::render::explain::session_text(&answer),
        ExplainFormat::Json => crate::render::json(&answer)?,
        ExplainFormat::Dot => return Err(CliError::Unsupported("--format dot with --session")),
    };
    write_stdout(out.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// `explain --session` for an agent whose sessions are read from its own record: why each
/// rule-like file joined or left each request (and with a FILE, what a Read of it attaches at
/// the next step).
fn explain_record(args: &ExplainArgs, agent: Agent, record: &Path) -> Result<ExitCode, CliError> {
    if matches!(args.format, ExplainFormat::Dot) || args.message.is_some() {
        return Err(CliError::Usage(format!("--session for {agent}: text or json, without --message")));
    }
    let (engine, ws) = super::open_with(HostEnv::from_process(), args.cwd.clone())?;
    let record = absolute(record)?;
    let costs = engine.session_costs(ws, agent, &record)?;
    let read = match args.target.as_deref() {
        Some(target) => {
            let request = ctxgraph_db::profile::Request::default();
            Some(engine.agent_read_in_session(ws, agent, &absolute(Path::new(target))?, &request, &record)?)
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
            crate::render::json(&value)?
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

/// A path given on the command line, resolved against where ctxgraph runs.
pub(super) fn absolute(path: &Path) -> Result<PathBuf, CliError> {
    std::path::absolute(path).map_err(|err| {
        CliError::Engine(EngineError::ReadTarget { path: path.to_path_buf(), reason: err.to_string() })
    })
}
