//! `ctxgraph mcp`.

use std::process::ExitCode;
use std::time::Duration;

use ctxgraph_engine::HostEnv;

use crate::args::McpArgs;
use crate::error::CliError;
use crate::mcp::{Options, serve};

pub fn run(args: McpArgs) -> Result<ExitCode, CliError> {
    let env = HostEnv::from_process();
    let fetch = super::fetch_options(&args.remote, &env);
    let options = Options {
        cwd: args.cwd,
        session: args.session,
        fetch,
        refresh: Duration::from_secs(args.remote_refresh_secs),
    };
    serve(env, options)?;
    Ok(ExitCode::SUCCESS)
}
