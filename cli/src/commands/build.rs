//! `ctxgraph build --agent NAME`: one road for every agent. The profile's
//! [`Layout`](ctxgraph_db::profile::Layout) of the section asked for, printed as its exact
//! text or as the one JSON shape every agent shares (`docs/profiles/README.md`). What the
//! layout waits on outside the file system (remote documents, MCP servers) is loaded first,
//! as the profile says ([`ctxgraph_engine::Engine::prepare_agent`]).

use std::process::ExitCode;

use ctxgraph_db::profile::Block;
use ctxgraph_engine::HostEnv;

use crate::args::{BuildArgs, Format};
use crate::error::CliError;
use crate::output::{eprintln_styled, write_verbatim};

pub fn run(args: BuildArgs) -> Result<ExitCode, CliError> {
    let (agent, section) = (args.text.agent, args.text.section.section());
    let env = HostEnv::from_process();
    let policy = super::policy(&args.remote, &env);
    let vars = env.vars.clone();
    let (mut engine, ws) = super::open_with(env, args.text.cwd.clone())?;
    let installation = args.text.installation.path.as_deref().or(args.message.opencode.as_deref());
    let extra = args.message.settings(args.text.model.as_deref());
    let request = super::profiles::text_request(&mut engine, &args.text, extra, installation, &vars)?;
    super::prepare_agent(&mut engine, ws, agent, section, &policy)?;
    let layout = engine.agent_layout(ws, agent, &request)?;
    super::profiles::warn_unavailable(agent, &layout.wording);
    warn_placeholders(&layout);
    if let Some(note) = &layout.note {
        eprintln_styled(&format!("warning: {note}"));
    }
    warn_unordered(&layout.blocks);
    if let Some(how) = ctxgraph_engine::profiles::profile(agent).prompt_built_by_server() {
        eprintln_styled(&format!("note: {how}"));
    }
    match args.format {
        Format::Text => write_verbatim(layout.text.as_bytes())?,
        Format::Json => {
            super::profiles::write_json(&ctxgraph_server::render::profile::LayoutView::new(&layout))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// L3: a block that stands in for a text the installation has but this text cannot use (no
/// model chose opencode's model prompt), when the wording as a whole was read.
fn warn_placeholders(layout: &ctxgraph_db::profile::Layout) {
    if layout.wording.is_unavailable() {
        return;
    }
    for block in &layout.blocks {
        if let Some(why) = &block.placeholder {
            eprintln_styled(&format!("warning: the {} block is a placeholder: {why}", block.source.name()));
        }
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
