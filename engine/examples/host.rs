//! A minimal agent host on `ctxgraph-engine`: keeps one engine warm and asks it for an
//! agent's rule text before every model step, the way an agent loop would. Any agent of the
//! registry, through the one road every surface takes ([`AgentTurns`]).
//!
//! ```text
//! cargo run -p ctxgraph-engine --example host -- [DIR] [STEPS] [AGENT]
//! ```
//!
//! Each step prints the prompt's size and hash, which blocks changed since the previous
//! step and how many queries ran. Edit a rule file while it runs to see a step rebuild
//! only that block. It exits with 1 if a step without file changes executed any query.

#![allow(clippy::print_stdout, clippy::print_stderr, reason = "a command-line example reports on stdout")]

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use ctxgraph_engine::answers::profile::{Request, Section};
use ctxgraph_engine::remote::FetchOptions;
use ctxgraph_engine::watch::Watcher;
use ctxgraph_engine::{Agent, AgentTurns, Engine, Policy};

// A host already inside a tokio runtime awaits the engine's loaders directly.
#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let dir = args.next().map_or_else(|| PathBuf::from("."), PathBuf::from);
    let steps: u32 = args.next().and_then(|n| n.parse().ok()).unwrap_or(3);
    let agent = match args.next().map(|name| name.parse::<Agent>()) {
        None => Agent::Opencode,
        Some(Ok(agent)) => agent,
        Some(Err(err)) => {
            eprintln!("host: {err}");
            return ExitCode::from(2);
        }
    };
    match run(dir, steps, agent).await {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(err) => {
            eprintln!("host: {err}");
            ExitCode::from(2)
        }
    }
}

async fn run(dir: PathBuf, steps: u32, agent: Agent) -> Result<bool, Box<dyn std::error::Error>> {
    let mut engine = Engine::from_process();
    let ws = engine.open(&dir)?;
    // One step loads what the agent's rules wait on outside the file system, as its profile
    // says (opencode's: the remote org config, then the `instructions` URLs). It does not
    // block this runtime's thread; what failed comes back as warnings.
    let policy = Policy::everything(FetchOptions::default());
    let prepared = engine.load_agent(ws, agent, Section::Rules, &policy).await?;
    for warning in &prepared.warnings {
        eprintln!("host: warning: {warning}");
    }

    // The watcher turns file-system events into changes; a build then recomputes only
    // what they invalidated.
    let mut watcher = Watcher::new()?;
    let mut turns = AgentTurns::default();
    let request = Request::default();
    let mut warm = true;
    for step in 1..=steps {
        let pending = watcher.pending();
        let started = ctxgraph_engine::watch::status_clock();
        watcher.apply(&mut engine, &pending);
        let ws = engine.open(&dir)?;
        let turn = turns.build(&engine, ws, agent, &request)?;
        // Watch what this build looked at, so an edit made from now on is seen (and one
        // made since it started, by its `ctime`).
        watcher.track(&mut engine, started);
        println!(
            "step {step}: {} bytes, hash {}, {} blocks, changed {:?}, {} queries executed",
            turn.layout.text.len(),
            turn.layout.hash.map_or_else(String::new, |hash| hash.to_string()[..16].to_owned()),
            turn.layout.blocks.len(),
            turn.diff.changed(),
            turn.executed,
        );
        if step > 1 && pending.is_empty() && turn.executed > 0 {
            warm = false;
        }
        if step < steps {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    Ok(warm)
}
