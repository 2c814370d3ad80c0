//! `ctxgraph explain`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use ctxgraph_db::profile::{Block, Request, Section};
use ctxgraph_engine::{EngineError, LimitOverrides};

use ctxgraph_db::agent::Agent;

use crate::args::{ExplainArgs, ExplainFormat, SessionInput};
use crate::error::CliError;
use crate::output::write_stdout;
use crate::render;

pub fn run(args: ExplainArgs) -> Result<ExitCode, CliError> {
    if args.agent.one() != Some(Agent::Opencode) {
        return super::views::explain(args);
    }
    if args.session.is_some() {
        return session(args);
    }
    let (mut engine, ws) = super::open_fetching(args.cwd.clone(), &args.remote)?;
    let message_prompt = message_prompt(&mut engine, ws, &args)?;
    let out = match &args.target {
        None => {
            // B4 and B5 apply the permissions of `--opencode-agent` (default `build`).
            let agent = args.opencode_agent.as_deref().unwrap_or("build");
            let workspace = ctxgraph_server::ops::explain_workspace(&engine, ws, agent)?;
            match args.format {
                ExplainFormat::Text => {
                    let mut text = workspace.text();
                    if let Some(block) = &message_prompt {
                        text.push_str(&render::explain::message_prompt_text(block));
                    }
                    text
                }
                ExplainFormat::Json => render::json(&workspace.view().with_message_prompt(message_prompt))?,
                ExplainFormat::Dot => {
                    render::dot::graph(&workspace.explanation.items, &workspace.explanation.entries)
                }
            }
        }
        Some(target) => {
            let base = std::env::current_dir().map_err(|err| EngineError::WorkingDirectory {
                path: PathBuf::from("."),
                reason: err.to_string(),
            })?;
            let answer = engine.explain_target(ws, target, &base)?;
            match args.format {
                ExplainFormat::Text => render::explain::target_text(&answer),
                ExplainFormat::Json => render::json(&render::explain::TargetView::new(&answer))?,
                ExplainFormat::Dot => render::dot::graph(&answer.items, &answer.entries),
            }
        }
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

/// `explain --session`: the session's reads and its next compaction.
fn session(args: ExplainArgs) -> Result<ExitCode, CliError> {
    let Some(export) = args.session else { return Ok(ExitCode::SUCCESS) };
    let input = SessionInput { session: export, cwd: args.cwd, remote: args.remote };
    let (mut engine, ws, session) = super::session::open(&input)?;
    let overrides =
        LimitOverrides { context: args.limits.context, input: args.limits.input, output: args.limits.output };
    let file = args.target.as_deref().map(Path::new);
    let answer = engine.explain_session(ws, session, overrides, args.message.as_deref(), file)?;
    let out = match args.format {
        ExplainFormat::Text => render::explain::session_text(&answer),
        ExplainFormat::Json => render::json(&answer)?,
        ExplainFormat::Dot => return Err(CliError::Unsupported("--format dot with --session")),
    };
    write_stdout(out.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}
