//! Per-turn cost of a warm engine against rebuilding from scratch, on one synthetic
//! monorepo, in one run: `cargo bench -p ctxgraph-server --bench turns`.
//!
//! Criterion measures and reports each scenario; the closing table puts the medians side
//! by side as ratios to the cold build, which is what the targets in BENCHMARKS.md are
//! about (criterion reports each benchmark on its own, not ratios between them).
//! `CTXGRAPH_BENCH_LARGE=1` runs the 100 000-file case.

// A benchmark's output is its report.
#![allow(clippy::print_stdout, clippy::print_stderr)]
// Iteration counts and KiB figures are far below 2^52, where `f64` starts to round.
#![allow(clippy::cast_precision_loss)]

use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode};
use ctxgraph_engine::watch::Watcher;
use ctxgraph_engine::{ChangeEvent, Engine, HostEnv, OsSystem, Turns};
use ctxgraph_opencode::prompt::Section;
use ctxgraph_server::rpc::Server;

use ctxgraph_test_support::monorepo::{self, INSTRUCTIONS, Monorepo, Shape};

/// Set in the child process that measures peak memory.
const RSS_CHILD: &str = "CTXGRAPH_BENCH_RSS_CHILD";

/// Per-iteration times of each scenario, in seconds, as measured inside criterion's loops.
static SAMPLES: Mutex<BTreeMap<&'static str, Vec<f64>>> = Mutex::new(BTreeMap::new());

fn record(name: &'static str, total: Duration, iters: u64) {
    let per_iter = total.as_secs_f64() / iters.max(1) as f64;
    SAMPLES.lock().unwrap_or_else(std::sync::PoisonError::into_inner).entry(name).or_default().push(per_iter);
}

fn env(repo: &Monorepo) -> HostEnv {
    HostEnv {
        vars: BTreeMap::from([("HOME".to_owned(), repo.home.display().to_string())]),
        home: repo.home.clone(),
        platform: "linux".to_owned(),
        date: "Sun Nov 29 2026".to_owned(),
    }
}

fn engine(repo: &Monorepo) -> Engine {
    Engine::new(Arc::new(OsSystem), env(repo))
}

/// One turn as a host runs it: open the working directory, build, lay out, diff.
/// `iters` turns, each on a fresh engine: everything stat'ed, listed, read and parsed.
fn fresh_engine_turns(repo: &Monorepo, cwd: &Path, iters: u64) -> Duration {
    let start = Instant::now();
    for _ in 0..iters {
        let mut engine = engine(repo);
        black_box(turn(&mut engine, &mut Turns::default(), cwd));
    }
    start.elapsed()
}

fn turn(engine: &mut Engine, turns: &mut Turns, cwd: &Path) -> usize {
    let ws = engine.open(cwd).expect("cwd");
    let turn = turns.build(engine, ws, Section::System, None).expect("build");
    turn.layout.text.len()
}

fn main() {
    if let Some(root) = std::env::var_os(RSS_CHILD) {
        return peak_rss_child(Path::new(&root));
    }
    let shape = Shape::from_env();
    let base = tempfile::tempdir().expect("temp dir");
    let (repo, generated) = monorepo::generate_reported(base.path(), shape);
    eprintln!("{generated}");

    let mut c = Criterion::default().configure_from_args().warm_up_time(Duration::from_millis(500));
    bench(&mut c, &repo);
    c.final_summary();

    let rss = peak_rss_of_server(base.path());
    report(shape, &repo, rss);
}

fn bench(c: &mut Criterion, repo: &Monorepo) {
    let cwd = repo.cwd.clone();
    let mut slow = c.benchmark_group("cold");
    slow.sampling_mode(SamplingMode::Flat).sample_size(10);
    slow.bench_function("cold build (fresh engine)", |b| {
        b.iter_custom(|iters| {
            let elapsed = fresh_engine_turns(repo, &cwd, iters);
            record("cold build", elapsed, iters);
            elapsed
        });
    });
    slow.bench_function("naive turn (fresh engine per turn, as opencode)", |b| {
        // What a host without incremental state pays on every model step: the same work
        // as a cold build, after a turn that changed nothing.
        // By construction the same work as a cold build, measured on its own so the table
        // shows it beside the warm turns.
        b.iter_custom(|iters| {
            let elapsed = fresh_engine_turns(repo, &cwd, iters);
            record("naive turn", elapsed, iters);
            elapsed
        });
    });
    slow.bench_function("bare walk (ignore crate) over the pattern directories", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            for _ in 0..iters {
                black_box(bare_walk(repo));
            }
            let elapsed = start.elapsed();
            record("bare ignore walk", elapsed, iters);
            elapsed
        });
    });
    slow.finish();

    let mut warm = c.benchmark_group("warm");
    let mut engine = engine(repo);
    let mut turns = Turns::default();
    turn(&mut engine, &mut turns, &cwd);

    warm.bench_function("no change", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            for _ in 0..iters {
                engine.apply_changes(&[]);
                black_box(turn(&mut engine, &mut turns, &cwd));
            }
            let elapsed = start.elapsed();
            record("warm, no change", elapsed, iters);
            elapsed
        });
    });

    let rule = repo.rule_on_walk.clone();
    let original = std::fs::read_to_string(&rule).expect("rule");
    warm.bench_function("one rule file edited", |b| {
        b.iter_custom(|iters| {
            let mut timed = Duration::ZERO;
            for i in 0..iters {
                // The edit itself is the user's, not the engine's: not timed.
                std::fs::write(&rule, format!("{original}edit {i}\n")).expect("edit");
                let start = Instant::now();
                engine.apply_changes(&[ChangeEvent::Modified(rule.clone())]);
                black_box(turn(&mut engine, &mut turns, &cwd));
                timed += start.elapsed();
            }
            record("warm, one rule file edited", timed, iters);
            timed
        });
    });
    std::fs::write(&rule, &original).expect("restore");
    engine.apply_changes(&[ChangeEvent::Modified(rule.clone())]);

    let added = repo.deep_dir.join("added.rules.md");
    warm.bench_function("one glob-matched file added", |b| {
        b.iter_custom(|iters| {
            let mut timed = Duration::ZERO;
            for _ in 0..iters {
                std::fs::write(&added, "A new rule.\n").expect("add");
                let start = Instant::now();
                engine.apply_changes(&[ChangeEvent::Created(added.clone())]);
                black_box(turn(&mut engine, &mut turns, &cwd));
                timed += start.elapsed();
                // Back to the original tree, untimed.
                std::fs::remove_file(&added).expect("remove");
                engine.apply_changes(&[ChangeEvent::Removed(added.clone())]);
                turn(&mut engine, &mut turns, &cwd);
            }
            record("warm, one glob-matched file added", timed, iters);
            timed
        });
    });

    let ws = engine.open(&cwd).expect("cwd");
    warm.bench_function("nearby for a deep file", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            for _ in 0..iters {
                black_box(engine.nearby(ws, &repo.deep_file).expect("nearby").reminder());
            }
            let elapsed = start.elapsed();
            record("warm nearby, deep file", elapsed, iters);
            elapsed
        });
    });
    warm.finish();
}

/// The baseline: list every directory the patterns need, with nothing else (the `**`
/// pattern needs the whole tree below the worktree root; `docs/*.md` the `docs`
/// directories on the walk), as a bare `ignore` walk with no filters.
fn bare_walk(repo: &Monorepo) -> usize {
    let mut entries = 0;
    for entry in ignore::WalkBuilder::new(&repo.root).standard_filters(false).hidden(false).build() {
        entries += usize::from(entry.is_ok());
    }
    debug_assert!(INSTRUCTIONS.iter().any(|p| p.starts_with("**")), "the baseline walks the whole tree");
    entries
}

fn median(samples: &[f64]) -> f64 {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied().unwrap_or(f64::NAN)
}

fn human(seconds: f64) -> String {
    match seconds {
        s if s >= 1.0 => format!("{s:.2} s"),
        s if s >= 1e-3 => format!("{:.2} ms", s * 1e3),
        s => format!("{:.1} µs", s * 1e6),
    }
}

fn report(shape: Shape, repo: &Monorepo, rss: Option<u64>) {
    let samples = SAMPLES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let medians: BTreeMap<&str, f64> = samples.iter().map(|(name, s)| (*name, median(s))).collect();
    let cold = medians.get("cold build").copied().unwrap_or(f64::NAN);
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    println!();
    println!(
        "{} files, {} directories, depth {}, {} rule files; {cores} cores",
        shape.files, repo.dirs, shape.depth, shape.rules
    );
    println!("| scenario | median | cold ÷ scenario |");
    println!("|---|---:|---:|");
    let order = [
        "cold build",
        "naive turn",
        "bare ignore walk",
        "warm, no change",
        "warm, one rule file edited",
        "warm, one glob-matched file added",
        "warm nearby, deep file",
    ];
    for name in order {
        if let Some(median) = medians.get(name) {
            println!("| {name} | {} | {:.1}× |", human(*median), cold / median);
        }
    }
    if let Some(walk) = medians.get("bare ignore walk") {
        println!("cold build ÷ bare walk: {:.2}", cold / walk);
    }
    match rss {
        Some(kib) => println!("peak RSS of a server after one build: {:.1} MiB", kib as f64 / 1024.0),
        None => println!("peak RSS: not measured (no /proc/self/status)"),
    }
}

/// Runs this binary again as [`peak_rss_child`] on the same tree: a fresh process, so the
/// peak is the server's, not criterion's.
fn peak_rss_of_server(base: &Path) -> Option<u64> {
    let exe = std::env::current_exe().ok()?;
    let output = std::process::Command::new(exe).env(RSS_CHILD, base).output().ok()?;
    String::from_utf8(output.stdout).ok()?.trim().parse().ok()
}

/// A `serve` session: one server with its watcher answers a build request for the deep
/// working directory; prints the process's peak RSS in KiB.
fn peak_rss_child(base: &Path) {
    let mut cwd = PathBuf::from(base).join("repo");
    while cwd.join("d0").is_dir() {
        cwd.push("d0");
    }
    let home = base.join("home");
    let env = HostEnv {
        vars: BTreeMap::from([("HOME".to_owned(), home.display().to_string())]),
        home,
        platform: "linux".to_owned(),
        date: "Sun Nov 29 2026".to_owned(),
    };
    let mut server = Server::new(Engine::new(Arc::new(OsSystem), env), Watcher::new().ok());
    let request = serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "build", "params": { "cwd": cwd }
    });
    let reply = server.handle_line(&request.to_string());
    assert!(reply.line.is_some_and(|line| line.contains("\"result\"")), "build failed");
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let peak = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
    if let Some(kib) = peak {
        println!("{kib}");
    }
}
