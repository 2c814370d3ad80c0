//! `ctxgraph watch`.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use ctxgraph_engine::watch::Watcher;
use ctxgraph_engine::{SystemClock, Turn, Turns};
use ctxgraph_opencode::prompt::Section;

use crate::args::{Format, WatchArgs};
use crate::error::{CliError, render, to_json};
use crate::output::{eprintln_styled, write_stdout};

pub fn run(args: WatchArgs) -> Result<ExitCode, CliError> {
    let (engine, ws, options) = super::open_configured(args.cwd, &args.remote)?;
    let mut engine = engine.with_clock(Arc::new(SystemClock::default()));
    let mut remote = super::remote_refresh(options, args.remote_refresh_secs, args.remote.no_mcp)?;
    let mut watcher = Watcher::new().map_err(CliError::Watch)?;
    let mut turns = Turns::default();
    loop {
        // Remote documents are refreshed when a rebuild is due anyway, at most once per
        // interval; a failure shows up in the build (an error or a missing block).
        if let Err(err) = remote.refresh(&mut engine, ws) {
            eprintln_styled(&render(&CliError::Engine(err)));
        }
        let started = ctxgraph_engine::watch::status_clock();
        let turn = turns.build(&engine, ws, Section::System, args.model.clone());
        // Watch what this build looked at before saying it is done: an edit made after
        // the line appears is always seen.
        watcher.track(&mut engine, started);
        match (turn, args.format) {
            (Ok(turn), Format::Text) => write_stdout(line(&turn).as_bytes())?,
            (Ok(turn), Format::Json) => {
                write_stdout(json_line(&serde_json::json!(Rebuild::of(&turn))).as_bytes())?;
            }
            // A broken config while editing is expected: say so and keep watching.
            (Err(err), Format::Text) => eprintln_styled(&render(&CliError::Engine(err))),
            (Err(err), Format::Json) => write_stdout(json_line(&to_json(&CliError::Engine(err))).as_bytes())?,
        }
        // Wait for a batch that touches an input (events only for paths no query read,
        // this command's own output redirected into the tree say, rebuild nothing), or for
        // the date to change (the environment block says today's date). The loop ends
        // when the process is interrupted.
        loop {
            if let Some(batch) = watcher.next_batch(DATE_POLL)
                && watcher.apply(&mut engine, &batch).touched_inputs()
            {
                break;
            }
            if engine.sync_date() {
                break;
            }
        }
    }
}

/// How often an idle `watch` looks at the clock: the new date shows within this of midnight.
const DATE_POLL: Duration = Duration::from_secs(30);

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

/// One rebuild under `--format json`: what the text line says, with the block ids.
#[derive(serde::Serialize)]
struct Rebuild<'a> {
    /// blake3 of the prompt (all 64 hex digits).
    hash: &'a str,
    bytes: usize,
    added: &'a [std::sync::Arc<str>],
    removed: &'a [std::sync::Arc<str>],
    modified: &'a [std::sync::Arc<str>],
    stable_prefix_bytes: usize,
    /// Queries that ran for this rebuild.
    executed: u64,
}

impl<'a> Rebuild<'a> {
    fn of(turn: &'a Turn) -> Self {
        let diff = &turn.diff;
        Rebuild {
            hash: &turn.layout.hash,
            bytes: turn.layout.text.len(),
            added: &diff.added,
            removed: &diff.removed,
            modified: &diff.modified,
            stable_prefix_bytes: diff.stable_prefix_bytes,
            executed: turn.executed,
        }
    }
}

/// A JSON value on one line: a consumer reads the stream line by line.
fn json_line(value: &serde_json::Value) -> String {
    let mut line = value.to_string();
    line.push('\n');
    line
}
