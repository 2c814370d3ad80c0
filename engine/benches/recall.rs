//! Recall over 10,000 facts and 5,000 observations: cold (a fresh engine parses and ranks
//! everything) against warm (one fact appended; only the facts stage and the assembly
//! re-run).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use ctxgraph_engine::HostEnv;
use ctxgraph_engine::{ChangeEvent, Engine, OsSystem};
use ctxgraph_memory::recall::Recall;

const NOW: i64 = 20_786 * 86_400_000;
const WORDS: &[&str] = &[
    "cache",
    "build",
    "deploy",
    "lint",
    "test",
    "schema",
    "router",
    "queue",
    "index",
    "worker",
    "token",
    "config",
    "docker",
    "pnpm",
    "cargo",
    "migration",
    "fixture",
    "logger",
    "metrics",
    "parser",
];

fn text(i: usize, n: usize) -> String {
    (0..n).map(|k| WORDS[(i * 7 + k * 13 + i / 3) % WORDS.len()]).collect::<Vec<_>>().join(" ")
        + &format!(" item{i}")
}

/// `i` minutes, in milliseconds.
fn minutes(i: usize) -> i64 {
    i64::try_from(i).unwrap() * 60_000
}

fn store(root: &Path) {
    let dir = root.join(".opencode/memory");
    std::fs::create_dir_all(&dir).unwrap();
    let mut facts = std::io::BufWriter::new(std::fs::File::create(dir.join("facts.jsonl")).unwrap());
    for i in 0..10_000 {
        writeln!(
            facts,
            r#"{{"type":"fact","v":1,"id":"fct_{i:06}","text":"{}","scope":"project","source":"compaction","hash":"h","createdAt":{t},"updatedAt":{t}}}"#,
            text(i, 8),
            t = NOW - minutes(i)
        )
        .unwrap();
    }
    let mut observations =
        std::io::BufWriter::new(std::fs::File::create(dir.join("observations.jsonl")).unwrap());
    for i in 0..5_000 {
        writeln!(
            observations,
            r#"{{"v":1,"id":"obs_{i:06}","tool":"bash","outcome":"error","kind":"gotcha","l0":"{}","l1":"{}","files":["src/m{i}.rs"],"evidenceHash":"e{i}","textHash":"t{i}","createdAt":{}}}"#,
            text(i, 10),
            text(i + 1, 30),
            NOW - minutes(i)
        )
        .unwrap();
    }
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    store(&root);
    let recall = Recall::new("docker cache deploy", NOW);
    let mut group = c.benchmark_group("memory_recall");
    group.sample_size(10);
    group.bench_function("cold_10k_facts_5k_observations", |b| {
        b.iter(|| {
            let mut engine = Engine::new(Arc::new(OsSystem), HostEnv::fixed("/nonexistent"));
            let ws = engine.open(&root).unwrap();
            engine.memory_recall(ws, recall.clone()).unwrap();
        });
    });
    let mut engine = Engine::new(Arc::new(OsSystem), HostEnv::fixed("/nonexistent"));
    let ws = engine.open(&root).unwrap();
    engine.memory_recall(ws, recall.clone()).unwrap();
    let facts = root.join(".opencode/memory/facts.jsonl");
    let mut n = 0;
    group.bench_function("warm_one_fact_appended", |b| {
        b.iter(|| {
            n += 1;
            let mut file = std::fs::OpenOptions::new().append(true).open(&facts).unwrap();
            writeln!(
                file,
                r#"{{"type":"fact","v":1,"id":"fct_x{n:06}","text":"docker cache {n}","scope":"project","source":"explicit","hash":"h","createdAt":{NOW},"updatedAt":{NOW}}}"#
            )
            .unwrap();
            engine.apply_changes(&[ChangeEvent::Modified(facts.clone())]);
            engine.memory_recall(ws, recall.clone()).unwrap();
        });
    });
    group.finish();
    report_executions(&root, &recall);
}

/// How many queries a cold recall and a warm one (one fact appended) execute, printed under
/// Criterion's timings: the warm figure is what incrementality saves.
#[allow(clippy::print_stdout)] // A benchmark's report.
fn report_executions(root: &Path, recall: &Recall) {
    let mut engine = Engine::new(Arc::new(OsSystem), HostEnv::fixed("/nonexistent"));
    let ws = engine.open(root).unwrap();
    engine.memory_recall(ws, recall.clone()).unwrap();
    let cold = engine.db().executions().total();
    let before = engine.db().executions().totals();
    let facts = root.join(".opencode/memory/facts.jsonl");
    let mut file = std::fs::OpenOptions::new().append(true).open(&facts).unwrap();
    writeln!(
        file,
        r#"{{"type":"fact","v":1,"id":"fct_y000001","text":"docker cache once more","scope":"project","source":"explicit","hash":"h","createdAt":{NOW},"updatedAt":{NOW}}}"#
    )
    .unwrap();
    engine.apply_changes(&[ChangeEvent::Modified(facts)]);
    engine.memory_recall(ws, recall.clone()).unwrap();
    let warm = engine.db().executions().total() - cold;
    let rerun: BTreeMap<String, u64> = engine
        .db()
        .executions()
        .totals()
        .into_iter()
        .map(|(query, n)| (n - before.get(&query).copied().unwrap_or(0), query))
        .filter(|(n, _)| *n > 0)
        .map(|(n, query)| (query, n))
        .collect();
    println!("queries executed: cold {cold}, warm (one fact appended) {warm}: {rerun:?}");
}

criterion_group!(benches, bench);
criterion_main!(benches);
