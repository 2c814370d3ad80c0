//! Appending one message to a long session and recomputing the compaction plan, against
//! planning the same session cold: `cargo bench -p ctxgraph-engine --bench session`.
//!
//! The session is synthetic (2000 messages: user prompts, tool calls with 2 KB outputs,
//! replies). Criterion reports both; the closing lines give the ratio of medians and the
//! queries each one executed (salsa `WillExecute` events), which is what the target is
//! about: an append re-runs the per-message queries of the new message and the facts of
//! the last run of 64 messages; the session-level walks read one memo per run.
//!
//! Then scaling (issue 24 D6): `explain --session` and `session compact` as the CLI runs
//! them (parse the export, load it into a fresh engine, answer), on generated sessions of
//! 2 000 and 8 000 steps of three shapes: one read per step, text only, and one message
//! with that many parallel reads. The table gives the median of `CTXGRAPH_BENCH_RUNS` runs
//! (default 3) and the ratio 8 000 ÷ 2 000 (linear: 4×; target ≤ 4.5×, and ≤ 1 s for 8 000
//! one-read steps). `CTXGRAPH_BENCH_STEPS=a,b` picks other sizes; `CTXGRAPH_BENCH_SCALING=only`
//! skips the criterion part.

// A benchmark's output is its report.
#![allow(clippy::print_stdout)]

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::Criterion;
use ctxgraph_engine::{Engine, HostEnv, LimitOverrides};
use ctxgraph_queries::opencode::config::schema::Compaction;
use ctxgraph_queries::opencode::session::compaction::{
    DEFAULT_SUMMARY_TEMPLATE, ModelLimit, PlanParams, summary_request,
};
use ctxgraph_queries::opencode::session::convert::TargetModel;
use ctxgraph_queries::opencode::session::export::{Export, ExportMessage, parse_export, parse_message};
use ctxgraph_queries::system::MemorySystem;
use serde_json::json;

const MESSAGES: usize = 2000;
/// Appends measured on one engine before a fresh one starts again from `MESSAGES`.
const APPENDS: usize = 16;

fn message(i: usize) -> serde_json::Value {
    let id = format!("msg_{i:05}");
    match i % 4 {
        0 => json!({"info": {"id": id, "role": "user", "model": {"providerID": "p", "modelID": "m"}},
                    "parts": [{"type": "text", "id": format!("prt_{i}"), "text": format!("prompt {i}")}]}),
        1 => {
            json!({"info": {"id": id, "role": "assistant", "providerID": "p", "modelID": "m", "finish": "tool-calls",
                             "tokens": {"total": 1000 + i, "input": 0, "output": 0, "cache": {"read": 0, "write": 0}}},
                    "parts": [{"type": "step-start", "id": format!("prt_{i}a")},
                              {"type": "tool", "id": format!("prt_{i}b"), "tool": "read", "callID": format!("call_{i}"),
                               "state": {"status": "completed", "input": {"filePath": format!("/p/f{i}.txt")},
                                         "output": "x".repeat(2000), "metadata": {"loaded": []}, "time": {}}},
                              {"type": "step-finish", "id": format!("prt_{i}c")}]})
        }
        _ => {
            json!({"info": {"id": id, "role": "assistant", "providerID": "p", "modelID": "m", "finish": "stop",
                             "tokens": {"total": 1000 + i, "input": 0, "output": 0, "cache": {"read": 0, "write": 0}}},
                    "parts": [{"type": "step-start", "id": format!("prt_{i}a")},
                              {"type": "text", "id": format!("prt_{i}b"), "text": format!("reply {i} ").repeat(20)}]})
        }
    }
}

fn export() -> Export {
    let messages: Vec<_> = (0..MESSAGES).map(message).collect();
    let text = json!({"info": {"id": "ses_bench"}, "messages": messages}).to_string();
    parse_export(text.as_bytes()).expect("synthetic export")
}

fn appended(i: usize) -> ExportMessage {
    parse_message(message(i).to_string().as_bytes()).expect("synthetic message")
}

fn engine() -> Engine {
    let env = HostEnv {
        vars: std::collections::BTreeMap::default(),
        home: PathBuf::from("/h"),
        platform: "linux".into(),
        date: "Sun Nov 29 2026".into(),
    };
    Engine::new(Arc::new(MemorySystem::default()), env)
}

fn params() -> PlanParams {
    PlanParams {
        limit: ModelLimit { context: 200_000, input: None, output: 32_000 },
        compaction: Compaction { prune: Some(true), ..Compaction::default() },
        target: TargetModel { provider_id: "p".into(), model_id: "m".into() },
    }
}

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn main() {
    if std::env::var("CTXGRAPH_BENCH_SCALING").as_deref() != Ok("only") {
        plan_benches();
    }
    scaling();
}

fn plan_benches() {
    let export = export();
    let mut criterion = Criterion::default().configure_from_args().sample_size(20);

    let mut cold = Vec::new();
    criterion.bench_function("session plan, cold (2000 messages)", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let mut engine = engine();
                let start = Instant::now();
                let session = engine.open_session(export.clone());
                black_box(engine.compaction_plan(session, params()));
                let took = start.elapsed();
                total += took;
                cold.push(took.as_secs_f64());
            }
            total
        });
    });

    // The session must stay at 2000 messages: criterion runs thousands of iterations, and
    // a session that grew by each of them would measure appends to a much longer one. So
    // every `APPENDS` appends (untimed) a fresh engine plans the 2000 messages again.
    let warm_engine = || {
        let mut engine = engine();
        let session = engine.open_session(export.clone());
        black_box(engine.compaction_plan(session, params()));
        (engine, session)
    };
    let mut warm = Vec::new();
    let (mut engine, mut session) = warm_engine();
    let mut next = MESSAGES;
    criterion.bench_function("session plan after appending one message", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                if next == MESSAGES + APPENDS {
                    (engine, session) = warm_engine();
                    next = MESSAGES;
                }
                let message = appended(next);
                next += 1;
                let start = Instant::now();
                engine.append_message(session, message);
                black_box(engine.compaction_plan(session, params()));
                let took = start.elapsed();
                total += took;
                warm.push(took.as_secs_f64());
            }
            total
        });
    });

    // Queries executed: a cold plan, then one append.
    let mut counting = self::engine();
    let session = counting.open_session(export);
    counting.compaction_plan(session, params());
    let cold_queries = counting.db().executions().total();
    counting.append_message(session, appended(MESSAGES));
    counting.compaction_plan(session, params());
    let warm_queries = counting.db().executions().total() - cold_queries;

    let (cold, warm) = (median(cold), median(warm));
    println!("\ncold plan: {:.2} ms, {cold_queries} queries executed", cold * 1e3);
    println!("append + plan: {:.1} µs, {warm_queries} queries executed", warm * 1e6);
    println!("cold ÷ append: {:.0}× (target ≥ 50×)", cold / warm);
}

/// The sessions D6 measured: each step an assistant message, after one user prompt.
#[derive(Clone, Copy)]
enum Shape {
    /// Each step reads one file (spread over 16 directories with a rule file each).
    OneRead,
    /// Each step only answers in text.
    TextOnly,
    /// One step reads `steps` files at once.
    ParallelReads,
}

impl Shape {
    fn name(self) -> &'static str {
        match self {
            Shape::OneRead => "one-read steps",
            Shape::TextOnly => "text-only steps",
            Shape::ParallelReads => "parallel reads in one message",
        }
    }
}

const DIRS: usize = 16;

fn read_file(i: usize) -> String {
    format!("/p/src/d{}/f{i}.txt", i % DIRS)
}

fn read_part(i: usize) -> serde_json::Value {
    json!({"type": "tool", "id": format!("prt_{i:05}r"), "tool": "read", "callID": format!("call_{i}"),
           "state": {"status": "completed", "input": {"filePath": read_file(i)},
                     "output": format!("<content>line {i}</content>"), "metadata": {"loaded": []}, "time": {}}})
}

fn step(i: usize, parts: Vec<serde_json::Value>, finish: &str) -> serde_json::Value {
    let mut all = vec![json!({"type": "step-start", "id": format!("prt_{i:05}a")})];
    all.extend(parts);
    all.push(json!({"type": "step-finish", "id": format!("prt_{i:05}z")}));
    json!({"info": {"id": format!("msg_{i:05}"), "role": "assistant", "parentID": "msg_user",
                    "providerID": "p", "modelID": "m", "finish": finish,
                    "tokens": {"total": 1000 + i, "input": 0, "output": 0, "cache": {"read": 0, "write": 0}}},
           "parts": all})
}

fn shaped_export(shape: Shape, steps: usize) -> Vec<u8> {
    let mut messages = vec![
        json!({"info": {"id": "msg_user", "role": "user", "model": {"providerID": "p", "modelID": "m"}},
                                   "parts": [{"type": "text", "id": "prt_user", "text": "read everything"}]}),
    ];
    match shape {
        Shape::OneRead => messages.extend((0..steps).map(|i| step(i, vec![read_part(i)], "tool-calls"))),
        Shape::TextOnly => messages.extend((0..steps).map(|i| {
            let text = json!({"type": "text", "id": format!("prt_{i:05}t"), "text": format!("step {i} ").repeat(10)});
            step(i, vec![text], "stop")
        })),
        Shape::ParallelReads => messages.push(step(0, (0..steps).map(read_part).collect(), "tool-calls")),
    }
    json!({"info": {"id": "ses_scaling"}, "messages": messages}).to_string().into_bytes()
}

/// A fresh engine on a repository at `/p` holding every file the reads name, a rule file
/// at its root and one in each directory read.
fn scaling_engine(steps: usize) -> (Engine, ctxgraph_queries::Workspace) {
    let system = Arc::new(MemorySystem::default());
    system.init_git_repo("/p");
    system.write_file("/p/AGENTS.md", "# Root rules");
    for d in 0..DIRS {
        system.write_file(format!("/p/src/d{d}/AGENTS.md"), format!("# Rules of d{d}"));
    }
    for i in 0..steps {
        system.write_file(read_file(i), format!("line {i}"));
    }
    let env = HostEnv {
        vars: std::collections::BTreeMap::default(),
        home: PathBuf::from("/h"),
        platform: "linux".into(),
        date: "Sun Nov 29 2026".into(),
    };
    let mut engine = Engine::new(system, env);
    let ws = engine.open(std::path::Path::new("/p")).expect("workspace");
    (engine, ws)
}

const OVERRIDES: LimitOverrides =
    LimitOverrides { context: Some(200_000), input: None, output: Some(32_000) };

/// `explain --session`: load, then explain every read and message.
fn run_explain(engine: &mut Engine, ws: ctxgraph_queries::Workspace, export: &[u8]) {
    let session = engine.load_session("bench", export).expect("export");
    let answer = engine.explain_session(ws, session, OVERRIDES, None, None).expect("explain");
    black_box(serde_json::to_string(&answer).expect("json"));
}

/// `session compact`: load, plan, and the summarizer's request.
fn run_compact(engine: &mut Engine, ws: ctxgraph_queries::Workspace, export: &[u8]) {
    let session = engine.load_session("bench", export).expect("export");
    let params = engine.plan_params(ws, session, OVERRIDES).expect("params");
    let plan = engine.compaction_plan(session, params);
    black_box(summary_request(DEFAULT_SUMMARY_TEMPLATE, plan));
    black_box(serde_json::to_string(plan).expect("json"));
}

type Command = fn(&mut Engine, ctxgraph_queries::Workspace, &[u8]);

/// The median time of `runs` runs of `command`, each on a fresh engine (not timed: making
/// the repository).
fn time(command: Command, shape: Shape, steps: usize, runs: usize) -> f64 {
    let export = shaped_export(shape, steps);
    let samples = (0..runs)
        .map(|_| {
            let (mut engine, ws) = scaling_engine(steps);
            let start = Instant::now();
            command(&mut engine, ws, &export);
            start.elapsed().as_secs_f64()
        })
        .collect();
    median(samples)
}

fn scaling() {
    let sizes: Vec<usize> = std::env::var("CTXGRAPH_BENCH_STEPS")
        .ok()
        .map(|v| v.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .filter(|v: &Vec<usize>| v.len() == 2)
        .unwrap_or_else(|| vec![2000, 8000]);
    let runs = std::env::var("CTXGRAPH_BENCH_RUNS").ok().and_then(|n| n.parse().ok()).unwrap_or(3);
    let (small, large) = (sizes[0], sizes[1]);
    println!("\n| session | command | {small} steps | {large} steps | ratio |");
    println!("|---|---|---:|---:|---:|");
    let commands: [(&str, Command); 2] =
        [("explain --session", run_explain), ("session compact", run_compact)];
    for shape in [Shape::OneRead, Shape::TextOnly, Shape::ParallelReads] {
        for (name, command) in commands {
            let a = time(command, shape, small, runs);
            let b = time(command, shape, large, runs);
            println!("| {} | {name} | {:.0} ms | {:.0} ms | {:.2}× |", shape.name(), a * 1e3, b * 1e3, b / a);
        }
    }
}
