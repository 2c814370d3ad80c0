//! `ctxgraph nearby`.

use std::process::ExitCode;

use ctxgraph_opencode::session::reads::{ReadPoint, SessionNearby};
use serde_json::json;

use ctxgraph_db::agent::Agent;

use crate::args::{Format, NearbyArgs, SessionInput};
use crate::error::CliError;
use crate::output::{write_json, write_verbatim};

pub fn run(args: NearbyArgs) -> Result<ExitCode, CliError> {
    if args.agent != Agent::Opencode {
        return super::profiles::nearby(args);
    }
    let result = if let Some(export) = args.session.clone() {
        let input = SessionInput { session: export, cwd: args.cwd.clone(), remote: args.remote.clone() };
        let (engine, ws, session) = super::session::open(&input)?;
        let point = match &args.message {
            Some(id) => ReadPoint::InMessage { message: id.clone(), before_part: None },
            None => ReadPoint::NextStep,
        };
        engine.nearby_in_session(ws, session, &args.file, &point)?
    } else {
        let (engine, ws, _) = super::open_configured(args.cwd.clone(), &args.remote)?;
        let nearby = engine.nearby(ws, &args.file)?;
        SessionNearby::fresh(&nearby)
    };
    match args.format {
        Format::Text => {
            if let Some(reminder) = &result.reminder {
                write_verbatim(reminder.as_bytes())?;
            }
        }
        Format::Json => {
            write_json(&json!(result), &["reminder"])?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
