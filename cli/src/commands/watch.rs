//! `ctxgraph watch`.

use std::process::ExitCode;
use std::time::Duration;

use ctxgraph_engine::watch::Watcher;
use ctxgraph_engine::{Turn, Turns};
use ctxgraph_queries::opencode::prompt::Section;

use crate::args::WatchArgs;
use crate::error::{CliError, render};
use crate::output::write_stdout;

pub fn run(args: WatchArgs) -> Result<ExitCode, CliError> {
    let (mut engine, ws, options) = super::open_configured(args.cwd, &args.remote)?;
    let mut remote = super::remote_refresh(options, args.remote_refresh_secs)?;
    let mut watcher = Watcher::new().map_err(CliError::Watch)?;
    let mut turns = Turns::default();
    loop {
        // Remote documents are refreshed when a rebuild is due anyway, at most once per
        // interval; a failure shows up in the build (an error or a missing block).
        if let Err(err) = remote.refresh(&mut engine, ws) {
            eprintln_error(&render(&CliError::Engine(err)));
        }
        let turn = turns.build(&engine, ws, Section::System, args.model.clone());
        // Watch what this build looked at before saying it is done: an edit made after
        // the line appears is always seen.
        watcher.track(&mut engine);
        match turn {
            Ok(turn) => write_stdout(line(&turn).as_bytes())?,
            // A broken config while editing is expected: say so and keep watching.
            Err(err) => eprintln_error(&render(&CliError::Engine(err))),
        }
        // Wait for a batch that touches an input: events only for paths no query read
        // (this command's own output redirected into the tree, say) rebuild nothing.
        // The loop ends when the process is interrupted.
        loop {
            if let Some(batch) = watcher.next_batch(Duration::from_secs(3600))
                && watcher.apply(&mut engine, &batch).touched_inputs()
            {
                break;
            }
        }
    }
}

/// One rebuild: hash, size, block changes, queries executed.
fn line(turn: &Turn) -> String {
    let diff = &turn.diff;
    format!(
        "{hash}  {bytes} bytes  blocks +{added} -{removed} ~{modified}  {executed} queries\n",
        hash = &turn.layout.hash[..16],
        bytes = turn.layout.text.len(),
        added = diff.added.len(),
        removed = diff.removed.len(),
        modified = diff.modified.len(),
        executed = turn.executed,
    )
}

fn eprintln_error(message: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{message}");
}
