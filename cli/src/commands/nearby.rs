//! `ctxgraph nearby`.

use std::process::ExitCode;

use crate::args::NearbyArgs;
use crate::error::CliError;
use crate::output::write_stdout;

pub fn run(args: NearbyArgs) -> Result<ExitCode, CliError> {
    let (engine, ws, _) = super::open_configured(args.cwd, &args.remote)?;
    let nearby = engine.nearby(ws, &args.file)?;
    if let Some(reminder) = nearby.reminder() {
        write_stdout(reminder.as_bytes())?;
    }
    Ok(ExitCode::SUCCESS)
}
