//! `ctxgraph nearby`: what any agent attaches when its model reads a file, through the one
//! read answer every surface gives ([`ctxgraph_engine::Engine::read`]).

use ctxgraph_db::profile::Section;
use std::process::ExitCode;

use ctxgraph_db::agent::Agent;
use ctxgraph_engine::answers::session::ReadPoint;
use ctxgraph_engine::{HostEnv, Policy};
use ctxgraph_server::render::profile::ReadView;

use crate::args::{Format, NearbyArgs, SessionInput};
use crate::error::CliError;
use crate::output::write_verbatim;

pub fn run(args: NearbyArgs) -> Result<ExitCode, CliError> {
    let agent = args.agent;
    let env = HostEnv::from_process();
    let request = super::profiles::request(agent, Section::Rules, &[], &args.installation, &env)?;
    let point = match &args.message {
        Some(id) => ReadPoint::InMessage { message: id.clone(), before_part: None },
        None => ReadPoint::NextStep,
    };
    let answer = match (&args.session, agent) {
        (Some(export), Agent::Opencode) => {
            let input =
                SessionInput { session: export.clone(), cwd: args.cwd.clone(), remote: args.remote.clone() };
            let (engine, ws, session) = super::session::open(&input)?;
            engine.read(ws, agent, &args.file, &request, Some((session, &point)))?
        }
        (Some(record), _) => {
            if args.message.is_some() {
                return Err(CliError::Usage(format!(
                    "--message is opencode's; {agent}'s session is read at its next step"
                )));
            }
            // Relative to where ctxgraph runs, as every file argument is.
            let record = std::path::absolute(record)
                .map_err(|err| CliError::ReadInput { path: record.clone(), source: err })?;
            let (engine, ws) = super::open_with(env, args.cwd.clone())?;
            let layout = engine.agent_read_in_session(ws, agent, &args.file, &request, &record)?;
            ctxgraph_engine::ReadAnswer { layout, opencode: None }
        }
        // What the agent's rules wait on (opencode's remote config), but no document or
        // server: a read attaches files. An agent that waits on nothing reads no other
        // agent's config, and does not fail on a broken opencode.json.
        (None, _) => {
            let policy = Policy::config_only(super::fetch_options(&args.remote, &env));
            let (mut engine, ws) = super::open_with(env, args.cwd.clone())?;
            super::warn(&engine.prepare_agent(ws, agent, Section::Rules, &policy)?);
            engine.read(ws, agent, &args.file, &request, None)?
        }
    };
    let read = &answer.layout;
    super::profiles::warn_unavailable(agent, &read.wording);
    match args.format {
        Format::Text => write_verbatim(read.text.as_bytes())?,
        Format::Json => super::profiles::write_json(&ReadView::new(&answer))?,
    }
    Ok(ExitCode::SUCCESS)
}
