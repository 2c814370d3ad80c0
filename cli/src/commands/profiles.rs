//! `build --agent NAME` for every agent but opencode (whose sections and model line are
//! options of its own): the profile's [`Layout`](ctxgraph_db::profile::Layout), printed as
//! its exact text or as the one JSON shape every agent shares (`docs/profiles/README.md`);
//! and what every agent's answers share on the command line (its request, its warnings).

use std::process::ExitCode;
use std::sync::Arc;

use ctxgraph_db::agent::Agent;
use ctxgraph_db::profile::{Block, Request, Section, WordingSource};
use ctxgraph_engine::HostEnv;
use serde::Serialize;

use crate::args::{BuildArgs, Format, InstallationArgs};
use crate::error::CliError;
use crate::output::{eprintln_styled, write_verbatim};

/// The request for `agent`: its `-c` settings and its own wording from the installation.
pub(super) fn request(
    agent: Agent,
    section: Section,
    settings: &[String],
    installation: &InstallationArgs,
    env: &HostEnv,
) -> Result<Request, CliError> {
    let settings = settings
        .iter()
        .map(|setting| {
            setting
                .split_once('=')
                .map(|(key, value)| (key.trim().to_owned(), value.trim().to_owned()))
                .ok_or_else(|| CliError::Usage(format!("-c {setting}: expected KEY=VALUE")))
        })
        .collect::<Result<_, _>>()?;
    let wording = ctxgraph_engine::wording::load(agent, installation.path.as_deref(), &env.vars);
    Ok(Request { section, settings, wording: wording.map(|w| w as Arc<_>) })
}

pub(super) fn warn_unavailable(agent: Agent, wording: &WordingSource) {
    if let WordingSource::Unavailable { reason } = wording {
        eprintln_styled(&format!(
            "warning: {}'s own wording is unavailable ({reason}); the text holds marked placeholders",
            ctxgraph_engine::profiles::profile(agent).title()
        ));
    }
}

/// The text prints a set's blocks in one order the agent does not keep (Aider's read-only
/// files): say so, since the bytes alone cannot.
fn warn_unordered(blocks: &[Block]) {
    let set: Vec<&Block> = blocks.iter().filter(|b| b.unordered).collect();
    if let Some(first) = set.first() {
        let why = first.unstable.as_deref().unwrap_or("the agent keeps them in no stable order");
        eprintln_styled(&format!("warning: these {} blocks come in no stable order: {why}", set.len()));
    }
}

pub fn build(args: BuildArgs) -> Result<ExitCode, CliError> {
    let agent = args.agent;
    if args.model.is_some() {
        return Err(CliError::Usage(format!("--model describes opencode's system text; {agent} has none")));
    }
    let env = HostEnv::from_process();
    let request = request(agent, args.section.section(), &args.agent_config, &args.installation, &env)?;
    let (mut engine, ws) = super::open_with(env, args.cwd)?;
    // The whole request holds what the agent's MCP servers answer (Claude Code's CC22).
    if request.section == Section::Request && !args.remote.no_mcp {
        let connector =
            ctxgraph_engine::mcp::McpConnector::new().map_err(ctxgraph_engine::EngineError::from)?;
        for (name, state) in engine.fetch_agent_mcp(ws, agent, &connector)? {
            if let ctxgraph_engine::answers::stages::McpState::Failed(failure) = state {
                eprintln_styled(&format!("warning: the MCP server {name} could not be used: {failure}"));
            }
        }
    }
    let layout = engine.agent_layout(ws, agent, &request)?;
    warn_unavailable(agent, &layout.wording);
    if let Some(note) = &layout.note {
        eprintln_styled(&format!("warning: {note}"));
    }
    warn_unordered(&layout.blocks);
    if let Some(how) = ctxgraph_engine::profiles::profile(agent).prompt_built_by_server() {
        eprintln_styled(&format!("note: {how}"));
    }
    match args.format {
        Format::Text => write_verbatim(layout.text.as_bytes())?,
        Format::Json => write_json(&ctxgraph_server::render::profile::LayoutView::new(&layout))?,
    }
    Ok(ExitCode::SUCCESS)
}

/// A layout's or a read's JSON: every string redacted but the blocks' and the read's
/// `text`, the prompt text the agent sends.
pub(super) fn write_json(value: &impl Serialize) -> Result<(), CliError> {
    crate::output::write_json(value, &["text"])
}
