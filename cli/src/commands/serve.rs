//! `ctxgraph serve --stdio`.

use std::process::ExitCode;
use std::sync::Arc;

use ctxgraph_engine::watch::Watcher;
use ctxgraph_engine::{Engine, HostEnv, OsSystem, SystemClock};
use ctxgraph_server::rpc::Server;

use crate::args::ServeArgs;
use crate::error::CliError;

pub fn run(args: ServeArgs) -> Result<ExitCode, CliError> {
    let watcher = if args.no_watch { None } else { Some(Watcher::new().map_err(CliError::Watch)?) };
    let env = HostEnv::from_process();
    let refresh = super::remote_refresh(
        super::fetch_options(&args.remote, &env),
        args.remote_refresh_secs,
        args.remote.no_mcp,
    )?;
    let engine = Engine::new(Arc::new(OsSystem), env).with_clock(Arc::new(SystemClock::default()));
    let mut server = Server::new(engine, watcher).with_remote(refresh);
    let stdin = std::io::stdin().lock();
    match server.run(stdin, std::io::stdout().lock()) {
        // The host went away: nothing left to answer.
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        Err(err) => Err(CliError::Output(err)),
        Ok(()) => Ok(ExitCode::SUCCESS),
    }
}
