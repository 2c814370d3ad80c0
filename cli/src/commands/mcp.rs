//! `ctxgraph mcp`.

use std::process::ExitCode;
use std::time::Duration;

use ctxgraph_engine::HostEnv;

use crate::args::McpArgs;
use crate::error::CliError;
use ctxgraph_server::mcp::{Options, ServeError, serve};

pub fn run(args: McpArgs) -> Result<ExitCode, CliError> {
    let env = HostEnv::from_process();
    let fetch = super::fetch_options(&args.remote, &env);
    let options = Options {
        cwd: args.cwd,
        session: args.session,
        fetch,
        refresh: Duration::from_secs(args.remote_refresh_secs),
    };
    serve(env, options).map_err(|err| match err {
        ServeError::Engine(err) => CliError::from(err),
        ServeError::Io(err) => CliError::Output(err),
    })?;
    Ok(ExitCode::SUCCESS)
}
