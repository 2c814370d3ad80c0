//! `ctxgraph build`.

use std::process::ExitCode;

use ctxgraph_db::agent::Agent;
use ctxgraph_db::remote::{LoadedFrom, RemoteState};
use ctxgraph_engine::Engine;
use ctxgraph_opencode::instructions::SystemPaths;
use ctxgraph_opencode::prompt::{PlacedBlock, Prompt, Section};
use serde::Serialize;

use crate::args::{BuildArgs, Format, SectionArg};
use crate::error::CliError;
use crate::output::{write_json, write_verbatim};

pub fn run(args: BuildArgs) -> Result<ExitCode, CliError> {
    match args.agent {
        Agent::Opencode if !args.agent_config.is_empty() => Err(CliError::Usage(
            "-c/--agent-config takes another agent's settings; opencode reads its own config files".into(),
        )),
        Agent::Opencode => opencode(args),
        _ => super::profiles::build(args),
    }
}

fn opencode(args: BuildArgs) -> Result<ExitCode, CliError> {
    // Only the whole message holds the MCP block: other sections start no MCP server.
    let mut remote = args.remote.clone();
    remote.no_mcp |= !matches!(args.section, SectionArg::Message);
    let (mut engine, ws) = super::open_fetching(args.cwd, &remote)?;
    let section = match args.section {
        SectionArg::System => Section::System,
        SectionArg::Environment => Section::Environment,
        SectionArg::Instructions => Section::Instructions,
        SectionArg::Message => Section::Message,
        SectionArg::Request => {
            return Err(CliError::Usage(
                "--section request: opencode builds only rules, environment, instructions, message".into(),
            ));
        }
    };
    let prompt = if section == Section::Message {
        super::load_installation(&mut engine, &args.message);
        let prompt = engine.system_message(ws, super::message_options(args.model, &args.message))?;
        super::warn_unavailable(&prompt);
        prompt
    } else {
        engine.system_prompt(ws, args.model)?
    };
    match args.format {
        Format::Text => write_verbatim(prompt.layout(section).text.as_bytes())?,
        Format::Json => {
            let paths = engine.system_paths(ws)?;
            // Ids, sources and URLs only: the report holds no prompt text.
            write_json(&Report::new(&engine, &prompt, section, &paths), &[])?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Serialize)]
struct Report {
    section: &'static str,
    bytes: usize,
    hash: String,
    blocks: Vec<PlacedBlock>,
    /// Every `instructions` URL, in config order, and what became of it.
    remote: Vec<RemoteReport>,
}

#[derive(Serialize)]
struct RemoteReport {
    url: String,
    config: String,
    /// `loaded`, `failed` or `pending`.
    state: &'static str,
    /// For loaded documents: `network`, `revalidated` or `cache`.
    #[serde(skip_serializing_if = "Option::is_none")]
    from: Option<&'static str>,
    /// Why it failed, or why a cached copy was used.
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<&'static str>,
}

impl Report {
    fn new(engine: &Engine, prompt: &Prompt, section: Section, paths: &SystemPaths) -> Self {
        let layout = prompt.layout(section);
        let remote = paths
            .remote
            .iter()
            .map(|entry| {
                let (state, from, failure) = match engine.remote_state(&entry.url) {
                    RemoteState::Pending => ("pending", None, None),
                    RemoteState::Failed(failure) => ("failed", None, Some(failure)),
                    RemoteState::Loaded { from, .. } => match from {
                        LoadedFrom::Network => ("loaded", Some("network"), None),
                        LoadedFrom::Revalidated => ("loaded", Some("revalidated"), None),
                        LoadedFrom::Cache { because } => ("loaded", Some("cache"), because),
                    },
                };
                RemoteReport {
                    url: entry.shown.clone(),
                    config: entry.source.name(),
                    state,
                    from,
                    code: failure.as_ref().map(ctxgraph_db::remote::FetchFailure::code),
                    reason: failure.map(|f| f.to_string()),
                }
            })
            .collect();
        Report {
            section: section.name(),
            bytes: layout.text.len(),
            hash: layout.hash,
            blocks: layout.blocks,
            remote,
        }
    }
}
