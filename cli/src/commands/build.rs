//! `ctxgraph build`.

use std::process::ExitCode;

use ctxgraph_queries::opencode::prompt::{Prompt, Section};
use serde::Serialize;

use crate::args::{BuildArgs, Format, SectionArg};
use crate::error::CliError;
use crate::output::write_stdout;

pub fn run(args: BuildArgs) -> Result<ExitCode, CliError> {
    let (engine, ws) = super::open(args.cwd)?;
    let prompt = engine.system_prompt(ws, args.model)?;
    let section = match args.section {
        SectionArg::System => Section::System,
        SectionArg::Environment => Section::Environment,
        SectionArg::Instructions => Section::Instructions,
    };
    match args.format {
        Format::Text => write_stdout(prompt.layout(section).text.as_bytes())?,
        Format::Json => {
            let paths = engine.system_paths(ws)?;
            let report = Report::new(&prompt, section, &paths);
            let mut json = serde_json::to_string_pretty(&report).map_err(|e| CliError::Output(e.into()))?;
            json.push('\n');
            write_stdout(json.as_bytes())?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Serialize)]
struct Report<'a> {
    section: &'static str,
    bytes: usize,
    hash: String,
    blocks: Vec<BlockReport<'a>>,
    /// `instructions` URLs: fetched by opencode on every step; not fetched by this build.
    pending_remote: Vec<RemoteReport>,
}

#[derive(Serialize)]
struct BlockReport<'a> {
    id: String,
    kind: ctxgraph_queries::opencode::prompt::BlockKind,
    source: Option<&'a str>,
    start: usize,
    end: usize,
    hash: String,
    rule: &'static str,
    reason: String,
}

#[derive(Serialize)]
struct RemoteReport {
    url: String,
    config: String,
}

impl<'a> Report<'a> {
    fn new(
        prompt: &'a Prompt,
        section: Section,
        paths: &ctxgraph_queries::opencode::instructions::SystemPaths,
    ) -> Self {
        let layout = prompt.layout(section);
        let blocks = layout
            .spans
            .iter()
            .map(|(index, range)| {
                let block = &prompt.blocks[*index];
                let reason = match block.candidate.and_then(|c| paths.candidates.get(c)) {
                    Some(candidate) => candidate.origin.describe(),
                    None => "B2: the environment block opencode recomputes on every step".to_owned(),
                };
                BlockReport {
                    id: ctxgraph_engine::block_id(block),
                    kind: block.kind,
                    source: block.source.as_deref(),
                    start: range.start,
                    end: range.end,
                    hash: blake3::hash(block.text.as_bytes()).to_hex().to_string(),
                    rule: block.rule,
                    reason,
                }
            })
            .collect();
        Report {
            section: match section {
                Section::System => "system",
                Section::Environment => "environment",
                Section::Instructions => "instructions",
            },
            bytes: layout.text.len(),
            hash: blake3::hash(layout.text.as_bytes()).to_hex().to_string(),
            blocks,
            pending_remote: paths
                .remote
                .iter()
                .map(|r| RemoteReport { url: r.url.clone(), config: r.source.name() })
                .collect(),
        }
    }
}
