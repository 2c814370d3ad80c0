//! `ctxgraph memory …`: write the workspace memory store, and print what recall sees.

use std::fmt::Write as _;
use std::io::Read;
use std::process::ExitCode;

use ctxgraph_engine::HostEnv;
use ctxgraph_memory::export::card_from_export;
use ctxgraph_memory::{Outcome, Store, system_clock};
use ctxgraph_queries::memory::Recall;
use ctxgraph_queries::memory::record::{FactSource, Scope};
use ctxgraph_queries::memory::render::{CutReason, MemoryContext};
use serde_json::json;

use crate::args::{
    Format, HandoffAction, MemoryArgs, MemoryCommand, OutcomeArg, ScopeArg, SessionCardAction,
};
use crate::error::CliError;
use crate::output::write_stdout;

pub fn run(args: MemoryArgs) -> Result<ExitCode, CliError> {
    let env = HostEnv::from_process();
    let vars = env.vars.clone();
    let (engine, ws) = super::open_with(env, args.cwd)?;
    let workspace = ws.cwd(engine.db()).clone();
    let store = Store::new(&workspace, &vars);
    let session = args.session.as_deref();
    let out = match args.command {
        MemoryCommand::Remember { text, scope, category } => {
            let scope = match scope {
                ScopeArg::User => Scope::User,
                ScopeArg::Project => Scope::Project,
            };
            let done = store.remember(&text, scope, &category, FactSource::Explicit, session)?;
            line(&done)?
        }
        MemoryCommand::Forget { target } => {
            let ids = store.forget(&target, session)?;
            line(&json!({ "forgotten": ids }))?
        }
        MemoryCommand::Recall { query, budget, format } => {
            let settings = engine.memory_settings(ws)?;
            let recall = Recall {
                max_chars: budget.or(settings.max_chars).unwrap_or(9000),
                detail: true,
                session_id: args.session.clone(),
                ..Recall::new(query.clone(), system_clock())
            };
            let context = engine.memory_recall(ws, recall);
            match format {
                Format::Text if context.text.is_empty() => format!("No stored memory matched {query:?}.\n"),
                Format::Text => format!("{}\n", context.text),
                Format::Json => crate::render::json(&context)?,
            }
        }
        MemoryCommand::Show { format } => show(&engine, ws, &store, format)?,
        MemoryCommand::Handoff { action: HandoffAction::Set { file } } => {
            let text = read_input(&file)?;
            let handoff = store.set_handoff(&text, session)?;
            crate::render::json(&handoff)?
        }
        MemoryCommand::Handoff { action: HandoffAction::Show } => match store.handoff()? {
            Some(handoff) => crate::render::json(&handoff)?,
            None => "No handoff.\n".to_owned(),
        },
        MemoryCommand::ToolOutcome { tool, outcome, kind, message } => {
            let outcome = match outcome {
                OutcomeArg::Ok => Outcome::Ok,
                OutcomeArg::Error => Outcome::Error,
            };
            let stat = store.record_tool_outcome(&tool, outcome, kind.as_deref(), message.as_deref())?;
            line(&json!({ "tool": tool, "calls": stat.calls, "errors": stat.errors, "recent": stat.recent }))?
        }
        MemoryCommand::SessionCard { action: SessionCardAction::Add { from_export } } => {
            let text = read_input(&from_export)?;
            let card = store.add_session_card(card_from_export(&text, system_clock())?)?;
            line(&json!({ "id": card.id, "sessionID": card.session_id }))?
        }
    };
    write_stdout(out.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

fn line(value: &impl serde::Serialize) -> Result<String, CliError> {
    let mut text = serde_json::to_string(value).map_err(|e| CliError::Output(e.into()))?;
    text.push('\n');
    Ok(text)
}

fn read_input(path: &std::path::Path) -> Result<String, CliError> {
    let mut text = String::new();
    let result = if path.as_os_str() == "-" {
        std::io::stdin().read_to_string(&mut text).map(|_| ())
    } else {
        std::fs::read_to_string(path).map(|t| text = t)
    };
    result.map_err(|source| CliError::ReadInput { path: path.to_path_buf(), source })?;
    Ok(text)
}

fn show(
    engine: &ctxgraph_engine::Engine,
    ws: ctxgraph_queries::Workspace,
    store: &Store,
    format: Format,
) -> Result<String, CliError> {
    let facts = store.facts()?;
    let handoff = store.handoff()?;
    // Everything, unclamped: `show` lists the store, it does not budget it.
    let recall = Recall { max_chars: 1 << 40, ..Recall::new("", system_clock()) };
    let context = engine.memory_recall(ws, recall);
    let skipped = engine.memory_skipped(ws);
    match format {
        Format::Json => crate::render::json(&json!({
            "root": store.root(),
            "facts": facts.iter().map(|f| json!({"record": f.record, "reason": f.reason})).collect::<Vec<_>>(),
            "handoff": handoff,
            "recall": context,
            "skipped": skipped,
        })),
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
            Ok(out)
        }
    }
}

/// explain's memory section: every recalled item with its score, every other candidate
/// with why it was cut.
pub fn explain_text(context: &MemoryContext) -> String {
    let mut out = format!("\nmemory (memory.md §11): {} of {} chars\n", context.chars, context.max_chars);
    for block in context.blocks.iter().chain(&context.removed) {
        let _ = writeln!(out, "  {} ({} chars, budget {})", block.title, block.chars, block.budget);
        for item in &block.items {
            let score = item.score.map_or_else(|| "-".to_owned(), |s| format!("{:.3}", s.0));
            let _ = writeln!(
                out,
                "    recalled {} score {score}{}",
                item.id,
                if item.detail { " (with detail)" } else { "" }
            );
        }
        for cut in &block.cut {
            let why = match &cut.reason {
                CutReason::Inactive { why } => format!("inactive ({why})"),
                CutReason::NoMatch => "no query token matches".to_owned(),
                CutReason::BelowFloor => "below 0.15 × the top score".to_owned(),
                CutReason::ItemCap { cap } => format!("past the block's {cap}-item cap"),
                CutReason::Budget { budget } => format!("over the block's {budget}-char budget"),
                CutReason::BlockRemoved => "its block was removed to fit the total".to_owned(),
                CutReason::NotEligible { why } => why.clone(),
            };
            let score = cut.score.map_or_else(String::new, |s| format!(" score {:.3}", s.0));
            let _ = writeln!(out, "    cut {}{score}: {why}", cut.id);
        }
    }
    out
}
