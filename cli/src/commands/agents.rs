//! `ctxgraph build --agent A` for the agents other than opencode: the text that agent sends
//! with its rule files, or the files as blocks with where they go and why.

use std::process::ExitCode;

use ctxgraph_engine::{CodexContext, HostEnv};
use ctxgraph_queries::codex::{Budget, Doc, Fate, Scope};
use serde::Serialize;

use crate::args::{BuildArgs, Format, SectionArg};
use crate::error::CliError;
use crate::output::write_stdout;

/// Codex: the `# AGENTS.md instructions` user message (CX4), or nothing when Codex sends
/// none.
pub fn build_codex(args: BuildArgs) -> Result<ExitCode, CliError> {
    if args.model.is_some() || !matches!(args.section, SectionArg::System) {
        return Err(CliError::Usage(
            "--model and --section describe opencode's system text; Codex has neither".into(),
        ));
    }
    let max_bytes = codex_overrides(&args.agent_config)?;
    let (engine, ws) = super::open_with(HostEnv::from_process(), args.cwd)?;
    let context = engine.codex_context(ws, max_bytes)?;
    let message = context.message.as_deref().unwrap_or_default();
    match args.format {
        Format::Text => write_stdout(message.as_bytes())?,
        Format::Json => {
            let mut json = serde_json::to_string_pretty(&CodexReport::new(&context))
                .map_err(|e| CliError::Output(e.into()))?;
            json.push('\n');
            write_stdout(json.as_bytes())?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The `-c KEY=VALUE` settings ctxgraph models for Codex: `project_doc_max_bytes` only.
fn codex_overrides(settings: &[String]) -> Result<Option<u64>, CliError> {
    let mut max_bytes = None;
    for setting in settings {
        let Some((key, value)) = setting.split_once('=') else {
            return Err(CliError::Usage(format!("-c {setting}: expected KEY=VALUE")));
        };
        match key.trim() {
            "project_doc_max_bytes" => {
                let bytes = value.trim().parse::<u64>().map_err(|err| {
                    CliError::Usage(format!(
                        "-c {setting}: project_doc_max_bytes must be a non-negative integer ({err})"
                    ))
                })?;
                max_bytes = Some(bytes);
            }
            other => {
                return Err(CliError::Usage(format!(
                    "-c {setting}: ctxgraph does not model Codex's `{other}` (known: project_doc_max_bytes)"
                )));
            }
        }
    }
    Ok(max_bytes)
}

#[derive(Serialize)]
struct CodexReport<'a> {
    agent: &'static str,
    cwd: &'a std::path::Path,
    git_root: Option<&'a std::path::Path>,
    budget: &'a Budget,
    /// Bytes of the whole message (0: Codex sends none).
    bytes: usize,
    hash: Option<String>,
    /// The files the message carries, in message order.
    blocks: Vec<BlockReport<'a>>,
    /// The files Codex looked at and left out.
    dropped: Vec<BlockReport<'a>>,
}

#[derive(Serialize)]
struct BlockReport<'a> {
    source: &'a std::path::Path,
    scope: Scope,
    /// Where the agent puts it (sent files only).
    #[serde(skip_serializing_if = "Option::is_none")]
    placement: Option<&'static str>,
    bytes: usize,
    #[serde(skip_serializing_if = "str::is_empty")]
    text: &'a str,
    #[serde(flatten)]
    fate: &'a Fate,
    reason: String,
}

impl<'a> CodexReport<'a> {
    fn new(context: &'a CodexContext) -> Self {
        let block = |doc: &'a Doc| BlockReport {
            source: &doc.source,
            scope: doc.scope,
            placement: doc.is_sent().then_some("user message before the first prompt"),
            bytes: doc.bytes,
            text: &doc.text,
            fate: &doc.fate,
            reason: doc.reason(&context.budget),
        };
        let message = context.message.as_deref();
        CodexReport {
            agent: "codex",
            cwd: &context.cwd,
            git_root: context.git_root.as_deref(),
            budget: &context.budget,
            bytes: message.map_or(0, str::len),
            hash: message.map(|m| blake3::hash(m.as_bytes()).to_hex().to_string()),
            blocks: context.docs.iter().filter(|d| d.is_sent()).map(block).collect(),
            dropped: context.docs.iter().filter(|d| !d.is_sent()).map(block).collect(),
        }
    }
}
