//! `ctxgraph explain`: why each rule is or is not there, for any agent, as every surface
//! answers it ([`ops::explain`]); `--session` explains a recorded session instead.

use std::path::PathBuf;
use std::process::ExitCode;

use ctxgraph_db::agent::Agent;
use ctxgraph_db::profile::{Block, Request, Section};
use ctxgraph_engine::{EngineError, HostEnv};
use ctxgraph_server::ops;
use ctxgraph_server::protocol::ExplainReply;

use crate::args::{ExplainArgs, ExplainFormat};
use crate::error::CliError;
use crate::output::write_stdout;
use crate::render;

pub fn run(args: ExplainArgs) -> Result<ExitCode, CliError> {
    if args.session.is_some() {
        return super::session::explain(args);
    }
    let env = HostEnv::from_process();
    let policy = super::policy(&args.remote, &env);
    let (mut engine, ws) = super::open_with(env, args.cwd.clone())?;
    // What the answer reads that is not on disk: one agent's whole explanation, or each
    // agent's rule files when they are compared side by side.
    let sections: Vec<(Agent, Section)> = match args.agent.one() {
        Some(agent) => vec![(agent, ops::explained_section(agent))],
        None => Agent::ALL.iter().map(|&agent| (agent, Section::Rules)).collect(),
    };
    for (agent, section) in sections {
        super::prepare_agent(&mut engine, ws, agent, section, &policy)?;
    }
    let base = std::env::current_dir()
        .map_err(|err| EngineError::WorkingDirectory { path: PathBuf::from("."), reason: err.to_string() })?;
    // B4 and B5 apply the permissions of `--opencode-agent` (default `build`).
    let opencode_agent = args.opencode_agent.as_deref().unwrap_or("build");
    let mut reply =
        ops::explain(&engine, ws, args.agent.one(), args.target.as_deref(), &base, opencode_agent)?;
    if let ExplainReply::Workspace(workspace) = &mut reply {
        workspace.message_prompt = message_prompt(&mut engine, ws, &args)?;
    }
    let out = match args.format {
        ExplainFormat::Text => reply.text(),
        ExplainFormat::Json => render::json(&reply)?,
        ExplainFormat::Dot => render::dot::graph(&reply),
    };
    write_stdout(out.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// With `--opencode-agent` or `--model`: the whole message's first block (B1/A2), laid out
/// by the profile as `build --section message` lays it out.
fn message_prompt(
    engine: &mut ctxgraph_engine::Engine,
    ws: ctxgraph_db::Workspace,
    args: &ExplainArgs,
) -> Result<Option<Block>, CliError> {
    if args.opencode_agent.is_none() && args.model.is_none() {
        return Ok(None);
    }
    let Some(agent) = args.agent.one() else { return Ok(None) };
    let vars = ctxgraph_engine::HostEnv::from_process().vars;
    let wording = engine.load_agent_installation(agent, Section::Message, args.opencode.as_deref(), &vars);
    let settings = ctxgraph_server::protocol::message_settings(
        args.model.as_deref(),
        args.opencode_agent.as_deref(),
        false,
        None,
    );
    let request = Request { section: Section::Message, settings, wording };
    let layout = engine.agent_layout(ws, agent, &request)?;
    Ok(layout.blocks.into_iter().next())
}
