//! `ctxgraph explain`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use ctxgraph_engine::{EngineError, LimitOverrides};

use crate::args::{ExplainArgs, ExplainFormat, SessionInput};
use crate::error::CliError;
use crate::output::write_stdout;
use crate::render;

/// The opencode agent whose permissions B4 applies (`--opencode-agent` comes with the
/// assembly).
const AGENT: &str = "build";

pub fn run(args: ExplainArgs) -> Result<ExitCode, CliError> {
    if args.session.is_some() {
        return session(args);
    }
    let (engine, ws) = super::open_fetching(args.cwd, &args.remote)?;
    let out = match &args.target {
        None => {
            let explanation = engine.explain(ws)?;
            let memory = engine.prompt_memory(ws);
            let references = engine.references(ws)?;
            let servers = engine.mcp_facts(ws, AGENT)?;
            match args.format {
                ExplainFormat::Text => {
                    let mut text = render::explain::text(&explanation);
                    text.push_str(&render::stages::text(&references, AGENT, &servers));
                    if let Some(memory) = &memory {
                        text.push_str(&render::explain::memory_text(memory));
                    }
                    text
                }
                ExplainFormat::Json => render::json(
                    &render::explain::ExplanationView::new(&explanation)
                        .with_memory(memory.as_ref())
                        .with_stages(render::stages::StagesView::new(&references, AGENT, &servers)),
                )?,
                ExplainFormat::Dot => render::dot::graph(&explanation.items, &explanation.entries),
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
