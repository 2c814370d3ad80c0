//! Appending one message to a long session and recomputing the compaction plan, against
//! planning the same session cold: `cargo bench -p ctxgraph-engine --bench session`.
//!
//! The session is synthetic (2000 messages: user prompts, tool calls with 2 KB outputs,
//! replies). Criterion reports both; the closing lines give the ratio of medians and the
//! queries each one executed (salsa `WillExecute` events), which is what the target is
//! about: an append re-runs the per-message queries of the new message and the facts of
//! the last run of 64 messages; the session-level walks read one memo per run.

// A benchmark's output is its report.
#![allow(clippy::print_stdout)]

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::Criterion;
use ctxgraph_engine::{Engine, HostEnv};
use ctxgraph_queries::opencode::config::schema::Compaction;
use ctxgraph_queries::opencode::session::compaction::{ModelLimit, PlanParams};
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
