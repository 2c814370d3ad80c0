//! `build --agent gemini` and `nearby --agent gemini`: the context Gemini CLI sends, as text,
//! or its files as JSON blocks with where they go and why.

use std::path::Path;
use std::process::ExitCode;

use ctxgraph_engine::{GeminiContext, GeminiReadContext, HostEnv};
use ctxgraph_queries::gemini::{Doc, Fate, Import, Scope, Settings};
use serde::Serialize;

use crate::args::{BuildArgs, Format, NearbyArgs, SectionArg};
use crate::error::CliError;
use crate::output::write_stdout;

/// GM1/GM3: the system instruction's `<loaded_context>` and the first user message's, or
/// their files as blocks.
pub fn build(args: BuildArgs) -> Result<ExitCode, CliError> {
    if args.model.is_some() || !matches!(args.section, SectionArg::System) || !args.agent_config.is_empty() {
        return Err(CliError::Usage(
            "--model, --section and -c describe opencode's and Codex's settings; Gemini CLI reads its settings.json files"
                .into(),
        ));
    }
    let (engine, ws) = super::open_with(HostEnv::from_process(), args.cwd)?;
    let context = engine.gemini_context(ws)?;
    match args.format {
        Format::Text => write_stdout(context.text().as_bytes())?,
        Format::Json => write_json(&GeminiReport::new(&context))?,
    }
    Ok(ExitCode::SUCCESS)
}

/// GM8: what a `read_file` of FILE attaches right after start-up.
pub fn nearby(args: NearbyArgs) -> Result<ExitCode, CliError> {
    if args.session.is_some() {
        return Err(CliError::Usage(
            "--session reads an opencode export; it has no Gemini CLI meaning".into(),
        ));
    }
    let (engine, ws) = super::open_with(HostEnv::from_process(), args.cwd)?;
    let read = engine.gemini_read_context(ws, &args.file)?;
    match args.format {
        Format::Text => write_stdout(read.text.as_deref().unwrap_or_default().as_bytes())?,
        Format::Json => write_json(&ReadReport::new(&read))?,
    }
    Ok(ExitCode::SUCCESS)
}

fn write_json(value: &impl Serialize) -> Result<(), CliError> {
    let mut json = serde_json::to_string_pretty(value).map_err(|e| CliError::Output(e.into()))?;
    json.push('\n');
    write_stdout(json.as_bytes())
}

#[derive(Serialize)]
struct GeminiReport<'a> {
    agent: &'static str,
    cwd: &'a Path,
    project_root: Option<&'a Path>,
    settings: &'a Settings,
    /// Bytes and blake3 of the whole text `build` prints.
    bytes: usize,
    hash: Option<String>,
    /// The files the context carries, in send order.
    blocks: Vec<BlockReport<'a>>,
    /// The files found and left out.
    dropped: Vec<BlockReport<'a>>,
}

#[derive(Serialize)]
struct BlockReport<'a> {
    source: &'a Path,
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
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    imports: &'a [Import],
}

fn block(doc: &Doc) -> BlockReport<'_> {
    BlockReport {
        source: &doc.source,
        scope: doc.scope,
        placement: doc.is_sent().then(|| doc.scope.placement()),
        bytes: doc.bytes,
        text: &doc.text,
        fate: &doc.fate,
        reason: doc.reason(),
        imports: &doc.imports,
    }
}

impl<'a> GeminiReport<'a> {
    fn new(context: &'a GeminiContext) -> Self {
        let text = context.text();
        GeminiReport {
            agent: "gemini",
            cwd: &context.cwd,
            project_root: context.project_root.as_deref(),
            settings: &context.settings,
            bytes: text.len(),
            hash: (!text.is_empty()).then(|| blake3::hash(text.as_bytes()).to_hex().to_string()),
            blocks: context.docs.iter().filter(|d| d.is_sent()).map(block).collect(),
            dropped: context.docs.iter().filter(|d| !d.is_sent()).map(block).collect(),
        }
    }
}

#[derive(Serialize)]
struct ReadReport<'a> {
    agent: &'static str,
    file: &'a Path,
    #[serde(skip_serializing_if = "Option::is_none")]
    outside: Option<&'a str>,
    text: Option<&'a str>,
    blocks: Vec<BlockReport<'a>>,
    dropped: Vec<BlockReport<'a>>,
    /// Context files on the way up that were already loaded at start-up.
    already_loaded: &'a [std::path::PathBuf],
}

impl<'a> ReadReport<'a> {
    fn new(read: &'a GeminiReadContext) -> Self {
        ReadReport {
            agent: "gemini",
            file: &read.target,
            outside: read.outside.as_deref(),
            text: read.text.as_deref(),
            blocks: read.docs.iter().filter(|d| d.is_sent()).map(block).collect(),
            dropped: read.docs.iter().filter(|d| !d.is_sent()).map(block).collect(),
            already_loaded: &read.already_loaded,
        }
    }
}
