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
//! them (parse the export, load it into a fresh engine, answer, serialise), on generated
//! sessions of 2 000, 4 000 and 8 000 steps of three shapes: one read per step, text only,
//! and one message with that many parallel reads, each sample in a process of its own as
//! the CLI runs. The table gives each size's median and best on-CPU time over
//! `CTXGRAPH_BENCH_RUNS` rounds (default 11, the sizes taken in turn) and the ratio
//! 8 000 ÷ 2 000 (linear: 4×; target ≤ 4.5×, and ≤ 1 s for 8 000 one-read steps).
//! `CTXGRAPH_BENCH_STEPS=a,b,…` picks other sizes, `CTXGRAPH_BENCH_CELL` one cell,
//! `CTXGRAPH_BENCH_PROCESS=shared` one process for all samples
//! ([`scaling`]); `CTXGRAPH_BENCH_SCALING=only` skips the criterion part.

// A benchmark's output is its report.
#![allow(clippy::print_stdout)]

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::Criterion;
use ctxgraph_db::system::MemorySystem;
use ctxgraph_engine::{Engine, HostEnv, LimitOverrides};
use ctxgraph_opencode::config::schema::Compaction;
use ctxgraph_opencode::session::compaction::{
    DEFAULT_SUMMARY_TEMPLATE, ModelLimit, PlanParams, summary_request,
};
use ctxgraph_opencode::session::convert::TargetModel;
use ctxgraph_opencode::session::export::{Export, ExportMessage, parse_export, parse_message};
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
    if let Ok(request) = std::env::var(SAMPLE_VAR) {
        return run_sample(&request);
    }
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

    /// Its name in `CTXGRAPH_BENCH_CELL`.
    fn short(self) -> &'static str {
        match self {
            Shape::OneRead => "one-read",
            Shape::TextOnly => "text-only",
            Shape::ParallelReads => "parallel",
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
fn scaling_engine(steps: usize) -> (Engine, ctxgraph_db::Workspace) {
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

/// `explain --session`: load, then explain every read and message. Never inlined, so
/// that callgrind can count its instructions alone (`--toggle-collect=*run_explain*`).
#[inline(never)]
fn run_explain(engine: &mut Engine, ws: ctxgraph_db::Workspace, export: &[u8]) {
    let session = engine.load_session("bench", export).expect("export");
    let answer = engine.explain_session(ws, session, OVERRIDES, None, None).expect("explain");
    black_box(serde_json::to_string(&answer).expect("json"));
}

/// `session compact`: load, plan, and the summarizer's request (`*run_compact*` for
/// callgrind).
#[inline(never)]
fn run_compact(engine: &mut Engine, ws: ctxgraph_db::Workspace, export: &[u8]) {
    let session = engine.load_session("bench", export).expect("export");
    let params = engine.plan_params(ws, session, OVERRIDES).expect("params");
    let plan = engine.compaction_plan(session, params);
    black_box(summary_request(DEFAULT_SUMMARY_TEMPLATE, plan));
    black_box(serde_json::to_string(plan).expect("json"));
}

type Command = fn(&mut Engine, ctxgraph_db::Workspace, &[u8]);

/// The time this thread has run on a CPU (`CLOCK_THREAD_CPUTIME_ID`), when the system
/// keeps one: unlike the wall clock it leaves out the time other processes held the CPU,
/// which on a loaded machine is most of the noise. (It still includes what they cost this
/// thread in caches.) Not `/proc/thread-self/schedstat`, which this bench read first: for
/// the running thread it lags by up to a scheduler tick (its times came in steps of 4 ms).
#[cfg(unix)]
fn on_cpu() -> Option<Duration> {
    let now = nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID).ok()?;
    Some(Duration::from(now))
}

#[cfg(not(unix))]
fn on_cpu() -> Option<Duration> {
    None
}

/// One run's on-CPU time in seconds, when the system keeps one.
type Sample = Option<f64>;

/// One shape and command: a cell of the table.
#[derive(Clone, Copy)]
struct Cell {
    shape: Shape,
    /// The command's name in `CTXGRAPH_BENCH_CELL`.
    short: &'static str,
    command: Command,
}

/// The child's side of [`run_in_child`]: `CTXGRAPH_BENCH_SAMPLE=SHAPE/COMMAND/STEPS` runs that
/// one sample and prints its on-CPU time.
const SAMPLE_VAR: &str = "CTXGRAPH_BENCH_SAMPLE";
const SAMPLE_LINE: &str = "ctxgraph-bench-sample";

/// One sample of `cell` at `steps` in a child process: this bench executable again, with
/// [`SAMPLE_VAR`] set (the export and repository are made there, untimed, as the CLI reads
/// its file before it parses).
fn run_in_child(cell: Cell, steps: usize) -> Sample {
    let exe = std::env::current_exe().expect("the bench's own executable");
    let output = std::process::Command::new(exe)
        .arg("--bench")
        .env(SAMPLE_VAR, format!("{}/{}/{steps}", cell.shape.short(), cell.short))
        .stderr(std::process::Stdio::inherit())
        .output()
        .expect("the bench runs itself");
    assert!(output.status.success(), "the sample's process failed: {}", output.status);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout.lines().find_map(|l| l.strip_prefix(SAMPLE_LINE)).expect("the sample's line");
    line.trim().parse().ok()
}

/// The sample a parent asked for with [`SAMPLE_VAR`], printed on one line.
fn run_sample(request: &str) {
    let mut fields = request.split('/');
    let (shape, command, steps) = (fields.next(), fields.next(), fields.next());
    let cell = CELLS
        .into_iter()
        .find(|c| Some(c.shape.short()) == shape && Some(c.short) == command)
        .unwrap_or_else(|| panic!("{SAMPLE_VAR}={request}: no such cell"));
    let steps: usize =
        steps.and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("{SAMPLE_VAR}={request}: steps"));
    let sample = run_once(cell.command, steps, &shaped_export(cell.shape, steps));
    println!("{SAMPLE_LINE} {}", sample.map_or_else(|| "-".to_owned(), |cpu| cpu.to_string()));
}

/// The table's rows, in order.
const CELLS: [Cell; 6] = [
    Cell::new(Shape::OneRead, "explain", run_explain),
    Cell::new(Shape::OneRead, "compact", run_compact),
    Cell::new(Shape::TextOnly, "explain", run_explain),
    Cell::new(Shape::TextOnly, "compact", run_compact),
    Cell::new(Shape::ParallelReads, "explain", run_explain),
    Cell::new(Shape::ParallelReads, "compact", run_compact),
];

impl Cell {
    const fn new(shape: Shape, short: &'static str, command: Command) -> Self {
        Cell { shape, short, command }
    }

    fn name(self) -> &'static str {
        if self.short == "explain" { "explain --session" } else { "session compact" }
    }
}

/// One run of `command` on a fresh engine, timed (making the repository is not).
fn run_once(command: Command, steps: usize, export: &[u8]) -> Sample {
    let (mut engine, ws) = scaling_engine(steps);
    let start = on_cpu();
    command(&mut engine, ws, export);
    let cpu = on_cpu().zip(start).and_then(|(end, start)| end.checked_sub(start)).map(|d| d.as_secs_f64());
    // Dropping the engine is not part of the command (the CLI exits instead).
    drop(engine);
    cpu
}

/// The median and the best of some samples.
#[derive(Clone, Copy)]
struct Stats {
    median: f64,
    best: f64,
}

impl Stats {
    fn of(samples: Vec<f64>) -> Self {
        let best = samples.iter().copied().fold(f64::INFINITY, f64::min);
        Stats { median: median(samples), best }
    }
}

/// A cell of the table: each size's on-CPU times summed up (when the system keeps them),
/// and the median over the rounds of each round's ratio of the last size to the first.
struct Measured {
    sizes: Vec<Option<Stats>>,
    round_ratio: Option<f64>,
}

/// Where a sample runs. The CLI runs each command in a process of its own; in one shared
/// process, a run reuses the heap the runs before it grew (the 2 000-step `explain` of
/// parallel reads took 29–31 ms right after an 8 000-step run, 37–56 ms in a process of its
/// own), so sizes measured in turn there are not measured alike.
#[derive(Clone, Copy)]
enum Process {
    /// Each sample in a fresh child process (this bench, run again), as the CLI runs.
    Fresh,
    /// Every sample in this process, one after the other.
    Shared,
}

/// `runs` samples of `command` at each of `sizes`, taken in rounds (every size once per
/// round), so that load from other processes that comes and goes during the bench falls on
/// every size alike instead of on whichever size was being measured then.
fn measure(cell: Cell, sizes: &[usize], runs: usize, process: Process) -> Measured {
    let exports: Vec<Vec<u8>> = match process {
        Process::Shared => sizes.iter().map(|&n| shaped_export(cell.shape, n)).collect(),
        Process::Fresh => Vec::new(),
    };
    let rounds: Vec<Vec<Sample>> = (0..runs)
        .map(|_| {
            (0..sizes.len())
                .map(|k| match process {
                    Process::Shared => run_once(cell.command, sizes[k], &exports[k]),
                    Process::Fresh => run_in_child(cell, sizes[k]),
                })
                .collect()
        })
        .collect();
    let round_ratio = rounds
        .iter()
        .map(|round| Some(round[round.len() - 1]? / round[0]?))
        .collect::<Option<Vec<f64>>>()
        .map(median);
    let sizes = (0..sizes.len())
        .map(|k| rounds.iter().map(|r| r[k]).collect::<Option<Vec<f64>>>().map(Stats::of))
        .collect();
    Measured { sizes, round_ratio }
}

fn ms(seconds: f64) -> String {
    if seconds < 0.01 { format!("{:.1} ms", seconds * 1e3) } else { format!("{:.0} ms", seconds * 1e3) }
}

/// Issue 24 D6's table: for each shape and command, `CTXGRAPH_BENCH_RUNS` rounds (default
/// 11) of one sample at each size of `CTXGRAPH_BENCH_STEPS` (default 2000,4000,8000), each
/// sample in a process of its own as the CLI runs (`CTXGRAPH_BENCH_PROCESS=shared`: all in
/// this one, [`Process`]). Each size shows its median and best on-CPU time, and the ratio of
/// the last size to the first is given three ways: the median of the rounds' on-CPU ratios,
/// the ratio of the median on-CPU times, and of the best ones. On-CPU time leaves out the
/// time other processes ran instead; the median is what the command costs once the rounds'
/// outliers either way are set aside, so the rounds' median is the ratio to hold against the
/// target. The best of a few tens of milliseconds moves with one lucky sample.
///
/// `CTXGRAPH_BENCH_CELL=SHAPE/COMMAND` (`one-read`, `text-only`, `parallel`; `explain`,
/// `compact`) measures that cell only: with one size, one run and `CTXGRAPH_BENCH_PROCESS=shared`,
/// what a profiler wants (`valgrind --tool=callgrind --toggle-collect='*run_explain*'` counts
/// the command's instructions alone).
fn scaling() {
    let sizes: Vec<usize> = std::env::var("CTXGRAPH_BENCH_STEPS")
        .ok()
        .map(|v| v.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .filter(|v: &Vec<usize>| !v.is_empty())
        .unwrap_or_else(|| vec![2000, 4000, 8000]);
    let runs = std::env::var("CTXGRAPH_BENCH_RUNS").ok().and_then(|n| n.parse().ok()).unwrap_or(11).max(1);
    let cell_var = std::env::var("CTXGRAPH_BENCH_CELL").ok();
    let process = match std::env::var("CTXGRAPH_BENCH_PROCESS").as_deref() {
        Ok("shared") => Process::Shared,
        _ => Process::Fresh,
    };
    let (first, last) = (sizes[0], sizes[sizes.len() - 1]);
    let columns: Vec<String> = sizes.iter().map(|n| format!("{n} steps")).collect();
    let samples_run = match process {
        Process::Fresh => "each sample in a process of its own",
        Process::Shared => "every sample in one process",
    };
    println!("\n{runs} rounds, each size once per round, {samples_run}; a size: on-CPU time, median / best");
    println!(
        "| session | command | {} | {last} ÷ {first}: rounds' median | of medians | of bests |",
        columns.join(" | ")
    );
    println!("|---|---|{}---:|---:|---:|", "---:|".repeat(sizes.len()));
    let ratio = |r: Option<f64>| r.map_or_else(|| "–".to_owned(), |r| format!("{r:.2}×"));
    for cell in CELLS {
        if cell_var.as_deref().is_some_and(|c| c != format!("{}/{}", cell.shape.short(), cell.short)) {
            continue;
        }
        let Measured { sizes, round_ratio } = measure(cell, &sizes, runs, process);
        let cells: Vec<String> = sizes
            .iter()
            .map(|s| s.map_or_else(|| "–".to_owned(), |c| format!("{} / {}", ms(c.median), ms(c.best))))
            .collect();
        let (a, b) = (&sizes[0], &sizes[sizes.len() - 1]);
        let of = |stat: fn(Stats) -> f64| a.zip(*b).map(|(a, b)| stat(b) / stat(a));
        println!(
            "| {} | {} | {} | {} | {} | {} |",
            cell.shape.name(),
            cell.name(),
            cells.join(" | "),
            ratio(round_ratio),
            ratio(of(|s| s.median)),
            ratio(of(|s| s.best)),
        );
    }
}
