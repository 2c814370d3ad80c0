//! A host's unchanged turn, per road: what one more `build` of the same text costs when no
//! file changed, opencode's own turns ([`Turns`]) beside the one road every agent takes
//! ([`AgentTurns`]), in one run over one tree so the ratios compare like with like:
//! `cargo bench -p ctxgraph-engine --bench turns`.
//!
//! The tree is in memory (a `MemorySystem`): a git worktree of `CTXGRAPH_BENCH_FILES` files
//! (default 20,000) in nested packages, an `AGENTS.md` and a `CLAUDE.md` at the root and in
//! each package, and an `opencode.json` with an `instructions` glob. Each row is the median of
//! `CTXGRAPH_BENCH_SAMPLES` turns (default 2,000) after a warm-up build: unchanged (no input
//! set since the last turn), and after an edit of a file no text reads (the inputs' state
//! moved, so the turn lays its text out again and compares).

// A benchmark's output is its report.
#![allow(clippy::print_stdout, clippy::cast_precision_loss)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ctxgraph_db::system::MemorySystem;
use ctxgraph_engine::answers::profile::Request;
use ctxgraph_engine::{Agent, AgentTurns, Engine, HostEnv, Section, Turns};

const ROOT: &str = "/w/repo";

fn count(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn tree(files: usize) -> MemorySystem {
    let fs = MemorySystem::new();
    fs.write_file(format!("{ROOT}/.git/HEAD"), "ref: refs/heads/main\n");
    fs.write_file(format!("{ROOT}/AGENTS.md"), "# Rules\n\n- run the tests\n".repeat(20));
    fs.write_file(format!("{ROOT}/CLAUDE.md"), "# Claude\n\n- be brief\n".repeat(20));
    fs.write_file(format!("{ROOT}/opencode.json"), r#"{"instructions": ["docs/*.md"]}"#);
    fs.write_file(format!("{ROOT}/docs/style.md"), "# Style\n".repeat(40));
    let packages = 50;
    for p in 0..packages {
        let dir = format!("{ROOT}/packages/p{p}");
        fs.write_file(format!("{dir}/AGENTS.md"), format!("# Package {p}\n").repeat(10));
        fs.write_file(format!("{dir}/CLAUDE.md"), format!("# Package {p} for Claude\n").repeat(10));
        for f in 0..files / packages {
            fs.write_file(format!("{dir}/src/m{}/f{f}.ts", f % 20), "export {};\n");
        }
    }
    fs
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn measure(samples: usize, mut turn: impl FnMut()) -> Duration {
    turn();
    let times = (0..samples)
        .map(|_| {
            let start = Instant::now();
            turn();
            start.elapsed()
        })
        .collect();
    median(times)
}

fn main() {
    let files = count("CTXGRAPH_BENCH_FILES", 20_000);
    let samples = count("CTXGRAPH_BENCH_SAMPLES", 2_000);
    let env = HostEnv::fixed(PathBuf::from("/w/home"));
    let mut engine = Engine::new(Arc::new(tree(files)), env);
    let cwd = format!("{ROOT}/packages/p7");
    let ws = engine.open(Path::new(&cwd)).expect("open");

    // After an edit of a file no text reads (an unsaved buffer of a source file): every
    // input state is new, so each road compares its layout with the previous one.
    let unrelated = PathBuf::from(format!("{cwd}/src/m0/f0.ts"));
    let mut edits = 0_usize;
    let mut edit = |engine: &mut Engine| {
        edits += 1;
        engine.set_overlay(&unrelated, &format!("export const n = {edits};\n"));
    };

    let mut opencode_turns = Turns::default();
    let own = measure(samples, || {
        black_box(opencode_turns.build(&engine, ws, Section::System, None).expect("build"));
    });
    let own_edited = measure(samples, || {
        edit(&mut engine);
        black_box(opencode_turns.build(&engine, ws, Section::System, None).expect("build"));
    });
    let mut rows = vec![("opencode, its own turns (Turns, the system prompt)".to_owned(), own, own_edited)];
    let request = Request::default();
    for agent in [Agent::Opencode, Agent::Codex, Agent::ClaudeCode, Agent::Gemini] {
        let mut turns = AgentTurns::default();
        let unchanged = measure(samples, || {
            black_box(turns.build(&engine, ws, agent, &request).expect("build"));
        });
        let edited = measure(samples, || {
            edit(&mut engine);
            black_box(turns.build(&engine, ws, agent, &request).expect("build"));
        });
        rows.push((format!("{agent}, the one road (AgentTurns, its rules)"), unchanged, edited));
    }
    println!("\n{files} files, the median of {samples} turns each\n");
    println!("| road | unchanged turn | ratio | after an edit no text reads | ratio |");
    println!("|---|---|---|---|---|");
    let micros = |time: Duration| time.as_secs_f64() * 1e6;
    for (what, unchanged, edited) in rows {
        println!(
            "| {what} | {:.1} µs | {:.2}× | {:.1} µs | {:.2}× |",
            micros(unchanged),
            unchanged.as_secs_f64() / own.as_secs_f64(),
            micros(edited),
            edited.as_secs_f64() / own_edited.as_secs_f64()
        );
    }
}
