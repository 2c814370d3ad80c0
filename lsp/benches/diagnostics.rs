//! What `ctxgraph lsp` does on a keystroke, in process, in a generated monorepo (100 000
//! files unless `CTXGRAPH_BENCH_FILES` says otherwise; test-support's `monorepo`): the
//! overlay set from the edited buffer, then the diagnostics of the open documents computed
//! on the warm engine. Two edits: the `AGENTS.md` on the working directory's walk (its
//! findings must be recomputed), and a source file no query read (nothing to recompute).
//! The protocol's framing and the worker thread's start are left out: microseconds beside
//! this. The median per case is printed at the end, with the queries each edit executed.

// A bench reports on stderr; its nanosecond counts are far below f64's 52-bit mantissa.
#![allow(clippy::print_stderr, clippy::cast_precision_loss)]

use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode};
use ctxgraph_engine::{Engine, HostEnv, OsSystem, Workspace};
use ctxgraph_lsp::analysis::{Open, diagnostics};
use ctxgraph_test_support::monorepo::{self, Monorepo, Shape};

fn env(repo: &Monorepo) -> HostEnv {
    HostEnv {
        vars: BTreeMap::from([("HOME".to_owned(), repo.home.display().to_string())]),
        home: repo.home.clone(),
        platform: "linux".to_owned(),
        date: "Sun Nov 29 2026".to_owned(),
    }
}

/// One keystroke: `path`'s buffer becomes `text`, then every open document's diagnostics.
fn keystroke(
    engine: &mut Engine,
    ws: Workspace,
    open: &[(PathBuf, String)],
    path: &Path,
    text: &str,
) -> usize {
    engine.set_overlay(path, text);
    let docs: Vec<Open<'_>> = open.iter().map(|(path, text)| Open { path, text }).collect();
    diagnostics(engine, ws, &docs).iter().map(Vec::len).sum()
}

fn main() {
    let var =
        |name: &str, default: usize| std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default);
    let shape = Shape {
        files: var("CTXGRAPH_BENCH_FILES", 100_000),
        depth: var("CTXGRAPH_BENCH_DEPTH", 12),
        rules: var("CTXGRAPH_BENCH_RULES", 500),
    };
    let base = tempfile::tempdir().expect("temp dir");
    let (repo, generated) = monorepo::generate_reported(base.path(), shape);
    eprintln!("{generated}");

    let mut engine = Engine::new(Arc::new(OsSystem), env(&repo));
    // The editor's workspace folder is the repository: the server answers from its root.
    let ws = engine.open(&repo.root).expect("root");
    let rule = repo.rule_on_walk.clone();
    let original = std::fs::read_to_string(&rule).expect("rule file");
    let open = vec![(rule.clone(), original.clone())];
    let cold = Instant::now();
    keystroke(&mut engine, ws, &open, &rule, &original);
    eprintln!("cold diagnostics (first open): {:.1?}", cold.elapsed());

    let mut c = Criterion::default().configure_from_args().warm_up_time(Duration::from_millis(500));
    let mut group = c.benchmark_group("lsp keystroke");
    group.sampling_mode(SamplingMode::Flat).sample_size(20);
    let mut medians: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    let mut executed: BTreeMap<&str, u64> = BTreeMap::new();
    let mut typed = 0u64;
    group.bench_function("edit AGENTS.md on the walk → diagnostics", |b| {
        b.iter_custom(|iters| {
            let before = engine.executions().total();
            let start = Instant::now();
            for _ in 0..iters {
                typed += 1;
                // A different text each time: a line typed, as an editor sends it.
                let text = format!("{original}- rule typed {typed}\n");
                black_box(keystroke(&mut engine, ws, &open, &rule, &text));
            }
            let elapsed = start.elapsed();
            medians.entry("edit AGENTS.md").or_default().push(elapsed.as_secs_f64() / iters as f64);
            *executed.entry("edit AGENTS.md").or_default() = (engine.executions().total() - before) / iters;
            elapsed
        });
    });
    let source = repo.deep_file.clone();
    group.bench_function("keystroke in a source file → diagnostics", |b| {
        b.iter_custom(|iters| {
            let before = engine.executions().total();
            let start = Instant::now();
            for _ in 0..iters {
                typed += 1;
                let text = format!("pub fn f() -> u32 {{ {typed} }}\n");
                black_box(keystroke(&mut engine, ws, &open, &source, &text));
            }
            let elapsed = start.elapsed();
            medians.entry("keystroke elsewhere").or_default().push(elapsed.as_secs_f64() / iters as f64);
            *executed.entry("keystroke elsewhere").or_default() =
                (engine.executions().total() - before) / iters;
            elapsed
        });
    });
    group.finish();
    c.final_summary();
    for (case, mut samples) in medians {
        samples.sort_by(f64::total_cmp);
        let median = samples[samples.len() / 2];
        let queries = executed.get(case).copied().unwrap_or_default();
        eprintln!("{case}: median {:.2} ms per keystroke, {queries} query executions each", median * 1e3);
    }
}
