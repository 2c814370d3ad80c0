//! `ctxgraph build --agent claude-code` and `ctxgraph nearby FILE --agent claude-code`:
//! the rule-file `<system-reminder>` of Claude Code's first user message, and what its Read
//! tool appends to a file (CC1–CC12), as text or as blocks with their fate and reason.

use std::path::Path;
use std::process::ExitCode;

use ctxgraph_engine::claude_code::claude_code_prose;
use ctxgraph_engine::{ClaudeMdContext, HostEnv, Prose, ReadAttachment};
use ctxgraph_queries::claude_code::{Approval, Fate, Kind, MemoryFile, ProseSource, entry, nearby_reminder};
use serde::Serialize;

use crate::args::{BuildArgs, Format, NearbyArgs, SectionArg};
use crate::error::CliError;
use crate::output::{eprintln_styled, write_stdout};

/// Where the block goes.
const PLACEMENT: &str = "first user message: a <system-reminder> text block before the prompt";
/// Where a Read's attachments go.
const READ_PLACEMENT: &str = "the Read tool's result, after the file's lines";

pub fn build(args: BuildArgs) -> Result<ExitCode, CliError> {
    if args.model.is_some() || !matches!(args.section, SectionArg::System) || !args.agent_config.is_empty() {
        return Err(CliError::Usage(
            "--model, --section and -c describe opencode's and Codex's settings; Claude Code has none here"
                .into(),
        ));
    }
    let env = HostEnv::from_process();
    let prose = load_prose(args.claude_code.path.as_deref(), &env);
    let (engine, ws) = super::open_with(env, args.cwd)?;
    let context = engine.claude_code_context(ws);
    let reminder = context.reminder(&prose);
    match args.format {
        Format::Text => write_stdout(reminder.as_deref().unwrap_or_default().as_bytes())?,
        Format::Json => write_json(&BuildReport::new(&context, &prose, reminder.as_deref()))?,
    }
    Ok(ExitCode::SUCCESS)
}

pub fn nearby(args: NearbyArgs) -> Result<ExitCode, CliError> {
    if args.session.is_some() {
        return Err(CliError::Usage(
            "--session reads an opencode export; Claude Code sessions are not modelled".into(),
        ));
    }
    let (engine, ws) = super::open_with(HostEnv::from_process(), args.cwd)?;
    let attachment = engine.claude_code_read(ws, &args.file)?;
    match args.format {
        Format::Text => write_stdout(attachment.text().as_bytes())?,
        Format::Json => {
            let context = engine.claude_code_context(ws);
            write_json(&ReadReport::new(&attachment, &context))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The prose, warning on stderr when it is unavailable (the text then has placeholders).
fn load_prose(explicit: Option<&Path>, env: &HostEnv) -> Prose {
    let prose = claude_code_prose(explicit, &env.vars);
    if let ProseSource::Unavailable { reason } = &prose.source {
        eprintln_styled(&format!(
            "warning: Claude Code's own wording is unavailable ({reason}); the preamble and labels are placeholders"
        ));
    }
    prose
}

fn write_json(report: &impl Serialize) -> Result<(), CliError> {
    let mut json = serde_json::to_string_pretty(report).map_err(|e| CliError::Output(e.into()))?;
    json.push('\n');
    write_stdout(json.as_bytes())
}

#[derive(Serialize)]
struct ProseReport<'a> {
    #[serde(flatten)]
    source: &'a ProseSource,
    unavailable: bool,
}

#[derive(Serialize)]
struct BuildReport<'a> {
    agent: &'static str,
    cwd: &'a Path,
    /// CC8: what `~/.claude.json` says about external imports for this project.
    approval: &'a Approval,
    prose: ProseReport<'a>,
    /// Bytes of the whole block (0: Claude Code sends none).
    bytes: usize,
    hash: Option<String>,
    /// The files the block carries, in block order.
    blocks: Vec<FileReport<'a>>,
    /// The files Claude Code looked at and left out.
    dropped: Vec<FileReport<'a>>,
}

#[derive(Serialize)]
struct FileReport<'a> {
    source: &'a Path,
    kind: Kind,
    #[serde(skip_serializing_if = "Option::is_none")]
    parent: Option<&'a Path>,
    /// Where the agent puts it (sent files only).
    #[serde(skip_serializing_if = "Option::is_none")]
    placement: Option<&'static str>,
    /// Exactly the bytes the agent inserts for this file, with its header line.
    #[serde(skip_serializing_if = "String::is_empty")]
    text: String,
    #[serde(flatten)]
    fate: &'a Fate,
    reason: String,
}

impl<'a> FileReport<'a> {
    fn new(file: &'a MemoryFile, context: &ClaudeMdContext, text: String, placement: &'static str) -> Self {
        FileReport {
            source: &file.source,
            kind: file.kind,
            parent: file.parent.as_deref(),
            placement: file.is_sent().then_some(placement),
            text,
            fate: &file.fate,
            reason: file.reason(&context.cwd, &context.approval),
        }
    }
}

impl<'a> BuildReport<'a> {
    fn new(context: &'a ClaudeMdContext, prose: &'a Prose, reminder: Option<&str>) -> Self {
        let report = |file: &'a MemoryFile| {
            let text = if file.is_sent() { entry(file, prose) } else { String::new() };
            FileReport::new(file, context, text, PLACEMENT)
        };
        BuildReport {
            agent: "claude-code",
            cwd: &context.cwd,
            approval: &context.approval,
            prose: ProseReport { source: &prose.source, unavailable: prose.is_unavailable() },
            bytes: reminder.map_or(0, str::len),
            hash: reminder.map(|r| blake3::hash(r.as_bytes()).to_hex().to_string()),
            blocks: context.sent().map(report).collect(),
            dropped: context.files.iter().filter(|f| !f.is_sent()).map(report).collect(),
        }
    }
}

#[derive(Serialize)]
struct ReadReport<'a> {
    agent: &'static str,
    file: &'a Path,
    bytes: usize,
    blocks: Vec<FileReport<'a>>,
    dropped: Vec<FileReport<'a>>,
}

impl<'a> ReadReport<'a> {
    fn new(attachment: &'a ReadAttachment, context: &'a ClaudeMdContext) -> Self {
        let report = |file: &'a MemoryFile| {
            let text = if file.is_sent() { nearby_reminder(file) } else { String::new() };
            let mut report = FileReport::new(file, context, text, READ_PLACEMENT);
            report.reason = attachment.reason(file, &context.cwd, &context.approval);
            report
        };
        ReadReport {
            agent: "claude-code",
            file: &attachment.file,
            bytes: attachment.text().len(),
            blocks: attachment.sent().map(report).collect(),
            dropped: attachment.files.iter().filter(|f| !f.is_sent()).map(report).collect(),
        }
    }
}
