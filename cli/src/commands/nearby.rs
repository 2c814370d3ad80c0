//! `ctxgraph nearby`: what any agent attaches when its model reads a file, through the one
//! read answer every surface gives ([`ctxgraph_engine::Engine::read`]).

use ctxgraph_db::profile::Section;
use std::process::ExitCode;

use ctxgraph_engine::{HostEnv, Policy};
use ctxgraph_server::render::profile::ReadView;

use crate::args::{Format, NearbyArgs};
use crate::error::CliError;
use crate::output::write_verbatim;

pub fn run(args: NearbyArgs) -> Result<ExitCode, CliError> {
    let agent = args.agent;
    let env = HostEnv::from_process();
    let request = super::profiles::request(agent, Section::Rules, &[], &args.installation, &env)?;
    let answer = if let Some(record) = &args.session {
        super::session::read(&args, record, &request)?
    } else {
        // What the agent's rules wait on (opencode's remote config), but no document or
        // server: a read attaches files. An agent that waits on nothing reads no other
        // agent's config, and does not fail on a broken opencode.json.
        let policy = Policy::config_only(super::fetch_options(&args.remote, &env));
        let (mut engine, ws) = super::open_with(env, args.cwd.clone())?;
        super::warn(&engine.prepare_agent(ws, agent, Section::Rules, &policy)?);
        engine.read(ws, agent, &args.file, &request, None)?
    };
    let read = &answer.layout;
    super::profiles::warn_unavailable(agent, &read.wording);
    match args.format {
        Format::Text => write_verbatim(read.text.as_bytes())?,
        Format::Json => super::profiles::write_json(&ReadView::new(&answer))?,
    }
    Ok(ExitCode::SUCCESS)
}
