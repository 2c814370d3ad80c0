//! `ctxgraph watch --agent NAME`: any agent's context rebuilt on every change that touches
//! it, each rebuild compared with the previous one ([`AgentTurns`]).

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use ctxgraph_engine::watch::Watcher;
use ctxgraph_engine::{AgentTurn, AgentTurns, ContentHash, HostEnv, SystemClock};

use crate::args::{Format, WatchArgs};
use crate::error::{CliError, render, to_json};
use crate::output::{eprintln_styled, write_stdout};

pub fn run(args: WatchArgs) -> Result<ExitCode, CliError> {
    let (agent, section) = (args.text.agent, args.text.section.section());
    let profile = ctxgraph_engine::profiles::profile(agent);
    let env = HostEnv::from_process();
    let fetch = super::fetch_options(&args.remote, &env);
    let vars = env.vars.clone();
    let (engine, ws) = super::open_with(env, args.text.cwd.clone())?;
    let mut engine = engine.with_clock(Arc::new(SystemClock::default()));
    let extra = ctxgraph_server::protocol::message_settings(args.text.model.as_deref(), None, false, None);
    let installation = args.text.installation.path.as_deref();
    let request = super::profiles::text_request(&mut engine, &args.text, extra, installation, &vars)?;
    // What the text waits on outside the file system (opencode's remote documents, an
    // agent's MCP servers), kept loaded; an agent that waits on nothing reads no remote config.
    let waits = profile.waits_on(section);
    let mut remote = super::remote_refresh(fetch, args.remote_refresh_secs, args.remote.no_mcp)?;
    let mut watcher = Watcher::new().map_err(CliError::Watch)?;
    let mut turns = AgentTurns::default();
    loop {
        // Remote documents are refreshed when a rebuild is due anyway, at most once per
        // interval; a failure shows up in the build (an error or a missing block).
        // What a config names (opencode's) only for a profile that reads it; an agent's own
        // MCP servers (opencode's `mcp` entries, Claude Code's `.mcp.json`) for one that
        // waits on them.
        let refreshed = if waits.reads_config() { remote.refresh(&mut engine, ws) } else { Ok(()) };
        let loaded = refreshed.and_then(|()| remote.connect_agent_mcp(&mut engine, ws, agent, section));
        if let Err(err) = loaded {
            eprintln_styled(&render(&CliError::Engine(err)));
        }
        let started = ctxgraph_engine::watch::status_clock();
        let turn = turns.build(&engine, ws, agent, &request);
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
        // the date to change (opencode's environment block says today's date). The loop
        // ends when the process is interrupted.
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

/// The text's blake3 (of the empty text when the agent sends none).
fn hash(turn: &AgentTurn) -> String {
    turn.layout.hash.map_or_else(|| ContentHash::of("").to_string(), |hash| hash.to_string())
}

/// One rebuild: hash, size, block changes, queries executed.
fn line(turn: &AgentTurn) -> String {
    let diff = &turn.diff;
    format!(
        "{hash}  {bytes} bytes  blocks +{added} -{removed} ~{modified}  {executed} queries\n",
        hash = &hash(turn)[..16],
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
    /// blake3 of the text (all 64 hex digits).
    hash: String,
    bytes: usize,
    added: &'a [Arc<str>],
    removed: &'a [Arc<str>],
    modified: &'a [Arc<str>],
    stable_prefix_bytes: usize,
    /// Queries that ran for this rebuild.
    executed: u64,
}

impl<'a> Rebuild<'a> {
    fn of(turn: &'a AgentTurn) -> Self {
        let diff = &turn.diff;
        Rebuild {
            hash: hash(turn),
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
