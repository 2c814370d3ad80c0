//! `ctxgraph nearby`.

use std::process::ExitCode;

use ctxgraph_queries::opencode::nearby::{Nearby, Skip};
use ctxgraph_queries::opencode::prompt::content_hash;
use ctxgraph_queries::path;
use serde::Serialize;

use crate::args::{Format, NearbyArgs};
use crate::error::CliError;
use crate::output::write_stdout;
use crate::render;

pub fn run(args: NearbyArgs) -> Result<ExitCode, CliError> {
    let (engine, ws, _) = super::open_configured(args.cwd, &args.remote)?;
    let nearby = engine.nearby(ws, &args.file)?;
    match args.format {
        Format::Text => {
            if let Some(reminder) = nearby.reminder() {
                write_stdout(reminder.as_bytes())?;
            }
        }
        Format::Json => write_stdout(render::json(&Report::new(&nearby))?.as_bytes())?,
    }
    Ok(ExitCode::SUCCESS)
}

/// The reminder and the rule files the read tool found, nearest first.
#[derive(Serialize)]
struct Report {
    /// Exactly what `--format text` prints; `null` when nothing is attached.
    reminder: Option<String>,
    rules: Vec<RuleReport>,
}

#[derive(Serialize)]
struct RuleReport {
    path: String,
    /// Whether its block is in the reminder.
    attached: bool,
    /// Why it is not: `is_target`, `in_system_prompt` or `empty`.
    #[serde(skip_serializing_if = "Option::is_none")]
    skipped: Option<&'static str>,
    /// blake3 of the attached block.
    #[serde(skip_serializing_if = "Option::is_none")]
    hash: Option<String>,
}

impl Report {
    fn new(nearby: &Nearby) -> Self {
        let rules = nearby
            .rules
            .iter()
            .map(|rule| RuleReport {
                path: path::display(&rule.path),
                attached: rule.block.is_some(),
                skipped: rule.skipped.as_ref().map(|skip| match skip {
                    Skip::IsTarget => "is_target",
                    Skip::InSystemPrompt => "in_system_prompt",
                    Skip::Empty => "empty",
                }),
                hash: rule.block.as_deref().map(content_hash),
            })
            .collect();
        Report { reminder: nearby.reminder(), rules }
    }
}
