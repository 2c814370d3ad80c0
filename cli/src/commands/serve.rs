//! `ctxgraph serve --stdio`.

use std::process::ExitCode;

use ctxgraph_engine::Engine;
use ctxgraph_engine::serve::Server;
use ctxgraph_engine::watch::Watcher;

use crate::args::ServeArgs;
use crate::error::CliError;

pub fn run(args: ServeArgs) -> Result<ExitCode, CliError> {
    let watcher = if args.no_watch { None } else { Some(Watcher::new().map_err(CliError::Watch)?) };
    let mut server = Server::new(Engine::from_process(), watcher);
    let stdin = std::io::stdin().lock();
    match server.run(stdin, std::io::stdout().lock()) {
        // The host went away: nothing left to answer.
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        Err(err) => Err(CliError::Output(err)),
        Ok(()) => Ok(ExitCode::SUCCESS),
    }
}
