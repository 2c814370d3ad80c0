//! `ctxgraph memory …`: write the workspace memory store, and print what recall sees.

use std::fmt::Write as _;
use std::process::ExitCode;

use ctxgraph_engine::HostEnv;
use ctxgraph_memory::export::card_from_export;
use ctxgraph_memory::extract::{Evidence, extraction_model, observe};
use ctxgraph_memory::recall::Recall;
use ctxgraph_memory::record::{FactSource, Scope};
use ctxgraph_memory::redact::Redactor;
use ctxgraph_memory::{MAX_ACTIVE_FACTS, Outcome, Remembered, Store, Stored, system_clock};
use ctxgraph_server::ops::{recall, recall_text};
use serde_json::json;

use crate::args::{
    Format, HandoffAction, MemoryArgs, MemoryCommand, OutcomeArg, ScopeArg, SessionCardAction,
};
use crate::error::CliError;
use crate::output::{eprintln_styled, write_stdout};

pub fn run(args: MemoryArgs) -> Result<ExitCode, CliError> {
    let env = HostEnv::from_process();
    let vars = env.vars.clone();
    let (engine, ws) = super::open_with(env, args.cwd)?;
    let workspace = engine.cwd(ws).to_path_buf();
    let store = Store::new(&workspace, &vars);
    let session = args.session.as_deref();
    let redactor = store.redactor();
    let out = match args.command {
        MemoryCommand::Remember { text, scope, category, format } => {
            let remembered = remember(&store, &text, scope, &category, session)?;
            if let Some(warning) = &remembered.warning {
                eprintln_styled(&format!("warning: {}", redactor.redact(warning).text));
            }
            match format {
                Format::Text => redactor.redact(&remembered_text(&remembered)).text,
                Format::Json => json_line(redactor, &remembered)?,
            }
        }
        MemoryCommand::Forget { target } => {
            let ids = store.forget(&target, session)?;
            json_line(redactor, &json!({ "forgotten": ids }))?
        }
        MemoryCommand::Recall { query, budget, format } => {
            let context = recall(&engine, ws, &query, budget, None, args.session.clone())?;
            match format {
                Format::Text => recall_text(redactor, &query, &context),
                Format::Json => pretty_json(redactor, &context)?,
            }
        }
        MemoryCommand::Show { format } => show(&engine, ws, &store, format)?,
        MemoryCommand::Handoff { action: HandoffAction::Set { file } } => {
            let text = read_input(&file)?;
            let handoff = store.set_handoff(&text, session)?;
            pretty_json(redactor, &handoff)?
        }
        MemoryCommand::Handoff { action: HandoffAction::Show } => match store.handoff()? {
            Some(handoff) => pretty_json(redactor, &handoff)?,
            None => "No handoff.\n".to_owned(),
        },
        MemoryCommand::ToolOutcome { tool, outcome, kind, message } => {
            let outcome = match outcome {
                OutcomeArg::Ok => Outcome::Ok,
                OutcomeArg::Error => Outcome::Error,
            };
            let stat = store.record_tool_outcome(&tool, outcome, kind.as_deref(), message.as_deref())?;
            json_line(
                redactor,
                &json!({ "tool": tool, "calls": stat.calls, "errors": stat.errors, "recent": stat.recent }),
            )?
        }
        MemoryCommand::Observe { tool, outcome, input, output, base_url } => {
            let outcome = match outcome {
                OutcomeArg::Ok => "completed",
                OutcomeArg::Error => "error",
            };
            let evidence =
                Evidence { tool, outcome: outcome.to_owned(), input, output: read_input(&output)? };
            let settings = engine.memory_settings(ws)?;
            let config = engine.merged_config(ws)?;
            let model =
                extraction_model(&settings, base_url, |provider, key| config.provider_option(provider, key))?;
            json_line(redactor, &observe(&store, &evidence, session, &model)?)?
        }
        MemoryCommand::SessionCard { action: SessionCardAction::Add { from_export } } => {
            let text = read_input(&from_export)?;
            let card = store.add_session_card(card_from_export(&text, system_clock())?)?;
            json_line(redactor, &json!({ "id": card.id, "sessionID": card.session_id }))?
        }
    };
    write_stdout(out.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// `ctxgraph memory remember`: an explicit fact (§4.2).
fn remember(
    store: &Store,
    text: &str,
    scope: ScopeArg,
    category: &str,
    session: Option<&str>,
) -> Result<Remembered, CliError> {
    let scope = match scope {
        ScopeArg::User => Scope::User,
        ScopeArg::Project => Scope::Project,
    };
    Ok(store.remember(text, scope, category, FactSource::Explicit, session)?)
}

/// What `remember` did, for a person: the fact stored (or already known), the one it
/// replaced, and each fact the cap retired to make room, with why.
fn remembered_text(remembered: &Remembered) -> String {
    let mut out = match &remembered.stored {
        Stored::Added { id } => format!("Remembered as a new fact, {id}.\n"),
        Stored::Duplicate { id } => format!("Already known as {id}: nothing was stored.\n"),
        Stored::Superseded { id, old } => format!(
            "Remembered as {id}, updating {old}: the two say nearly the same (same scope), so {old} is retired.\n"
        ),
    };
    if !remembered.evicted.is_empty() {
        let count = remembered.evicted.len();
        let _ = writeln!(
            out,
            "Retired {count} older fact{} to keep at most {MAX_ACTIVE_FACTS} active (the oldest facts from \
             compactions go first, then the oldest remembered ones):",
            if count == 1 { "" } else { "s" }
        );
        for fact in &remembered.evicted {
            let _ = writeln!(out, "  {} {}", fact.id, fact.text);
        }
    }
    out
}

/// `value` as JSON with every string redacted: a store edited by hand, or an echoed
/// argument, prints no secret.
fn redacted(redactor: &Redactor, value: &impl serde::Serialize) -> Result<serde_json::Value, CliError> {
    let mut value = serde_json::to_value(value).map_err(|e| CliError::Output(e.into()))?;
    redactor.redact_json(&mut value);
    Ok(value)
}

fn json_line(redactor: &Redactor, value: &impl serde::Serialize) -> Result<String, CliError> {
    let mut text = redacted(redactor, value)?.to_string();
    text.push('\n');
    Ok(text)
}

fn pretty_json(redactor: &Redactor, value: &impl serde::Serialize) -> Result<String, CliError> {
    crate::render::json(&redacted(redactor, value)?)
}

/// A file given as input (a handoff, a tool's output, an `opencode export`), or stdin for
/// `-`: a regular file only (never a FIFO or device, which could block or stream
/// forever), and no more than the engine reads of any file.
fn read_input(path: &std::path::Path) -> Result<String, CliError> {
    let bytes = super::read_input_bytes(path)
        .map_err(|source| CliError::ReadInput { path: path.to_path_buf(), source })?;
    String::from_utf8(bytes).map_err(|err| CliError::ReadInput {
        path: path.to_path_buf(),
        source: std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("not UTF-8 (byte {})", err.utf8_error().valid_up_to()),
        ),
    })
}

fn show(
    engine: &ctxgraph_engine::Engine,
    ws: ctxgraph_db::Workspace,
    store: &Store,
    format: Format,
) -> Result<String, CliError> {
    let facts = store.facts()?;
    let handoff = store.handoff()?;
    // Everything, unclamped: `show` lists the store, it does not budget it.
    let recall = Recall { max_chars: 1 << 40, ..Recall::new("", system_clock()) };
    let context = engine.memory_recall(ws, recall)?;
    let skipped = engine.memory_skipped(ws);
    let redactor = store.redactor();
    match format {
        Format::Json => pretty_json(
            redactor,
            &json!({
                "root": store.root(),
                "facts": facts.iter().map(|f| json!({"record": f.record, "reason": f.reason})).collect::<Vec<_>>(),
                "handoff": handoff,
                "recall": context,
                "skipped": skipped,
            }),
        ),
        Format::Text => {
            let mut out = format!("memory at {}\n", store.root().display());
            let _ = writeln!(out, "\nfacts ({}):", facts.len());
            for fact in &facts {
                let status = match &fact.reason {
                    Some(reason) => format!("inactive: {reason}"),
                    None => "active".to_owned(),
                };
                let _ = writeln!(
                    out,
                    "  {} [{}] ({status}) {}",
                    fact.record.id,
                    fact.record.scope.as_str(),
                    fact.record.text
                );
            }
            let _ = writeln!(out, "\nhandoff: {}", handoff.as_ref().map_or("none", |h| h.goal.as_str()));
            for (file, lines) in &skipped {
                for skip in lines {
                    let _ = writeln!(out, "skipped {file}:{}: {}", skip.line, skip.reason);
                }
            }
            if !context.text.is_empty() {
                let _ = writeln!(out, "\n{}", context.text);
            }
            Ok(redactor.redact(&out).text)
        }
    }
}
