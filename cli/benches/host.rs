//! What an agent host sees of `ctxgraph serve --stdio`, measured from a client process: this
//! benchmark spawns the real binary, talks JSON-RPC over its pipes, and prints the host-side
//! table of BENCHMARKS.md: `cargo bench -p ctxgraph-cli --bench host`
//! (`CTXGRAPH_BENCH_LARGE=1` for the 100 000-file tree).
//!
//! Every latency is put beside its floor, measured in the same run: the same reply's bytes
//! echoed through the pipes of a trivial process (`cat`), which is what any server costs a
//! host for a reply of that size. The tree is the one the `turns` benchmark builds.
//!
//! Not criterion: each row is a process-level scenario with its own floor and its own
//! correctness check (a stale reply counts, it is not a sample), and criterion compares a
//! benchmark only with its own history.

// A benchmark's output is its report.
#![allow(clippy::print_stdout, clippy::print_stderr)]
// Counts and KiB figures are far below 2^52, where `f64` starts to round.
#![allow(clippy::cast_precision_loss)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use ctxgraph_test_support::monorepo::{self, Monorepo, Shape};
use serde_json::{Value, json};

const CTXGRAPH: &str = env!("CARGO_BIN_EXE_ctxgraph");

/// A child process spoken to one line at a time over its stdin and stdout.
struct Pipe {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: String,
}

impl Pipe {
    fn spawn(command: &mut Command) -> Self {
        let mut child =
            command.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("spawn the child process");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Pipe { child, stdin, stdout, line: String::new() }
    }

    /// Writes `request` (one line) and reads one line back: what a host waits for. The
    /// line and its newline go in one `write`, as a host sends them: two writes would wake
    /// the reader twice, a cost of this client, not of the server.
    fn round_trip(&mut self, request: &str) -> Duration {
        let line = format!("{request}\n");
        let start = Instant::now();
        self.stdin.write_all(line.as_bytes()).expect("write request");
        self.stdin.flush().expect("flush");
        self.line.clear();
        let read = self.stdout.read_line(&mut self.line).expect("read reply");
        let elapsed = start.elapsed();
        assert!(read > 0, "the child closed its output");
        elapsed
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Pipe {
    fn drop(&mut self) {
        // No process outlives the run, whatever state it is in.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The echo floor: `cat` gets `line` and gives it back. A line longer than a pipe holds
/// (a whole-message reply) would stop both sides if this client wrote it all before reading:
/// a thread of its own writes, as the server's reader is its own.
struct Echo {
    child: Child,
    lines: Option<std::sync::mpsc::Sender<String>>,
    writer: Option<std::thread::JoinHandle<()>>,
    stdout: BufReader<ChildStdout>,
    line: String,
}

impl Echo {
    fn new() -> Self {
        let mut child = Command::new("cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn the child process");
        let mut stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let (lines, received) = std::sync::mpsc::channel::<String>();
        let writer = std::thread::spawn(move || {
            for line in received {
                if stdin.write_all(line.as_bytes()).and_then(|()| stdin.flush()).is_err() {
                    return;
                }
            }
        });
        Echo { child, lines: Some(lines), writer: Some(writer), stdout, line: String::new() }
    }

    /// Median round trip of `line` through `cat`.
    fn floor(&mut self, line: &str, samples: usize) -> Duration {
        median((0..samples).map(|_| self.once(line)).collect())
    }

    /// One round trip of `line` through `cat`.
    fn once(&mut self, line: &str) -> Duration {
        let sent = format!("{line}\n");
        let start = Instant::now();
        self.lines.as_ref().expect("the writer").send(sent).expect("the writer thread");
        self.line.clear();
        let read = self.stdout.read_line(&mut self.line).expect("read the echo");
        let time = start.elapsed();
        assert!(read > 0, "cat closed its output");
        assert_eq!(self.line.trim_end_matches('\n'), line, "cat echoed something else");
        time
    }
}

impl Drop for Echo {
    fn drop(&mut self) {
        drop(self.lines.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(writer) = self.writer.take() {
            let _ = writer.join();
        }
    }
}

/// `ctxgraph serve --stdio` with the tree's home and nothing else from this process's
/// environment.
fn serve_command(repo: &Monorepo) -> Command {
    let mut command = Command::new(CTXGRAPH);
    command.args(["serve", "--stdio"]).current_dir(&repo.root).env_clear().env("HOME", &repo.home);
    command
}

struct Server {
    pipe: Pipe,
    next_id: u64,
    /// The hash of the last text received per working directory (the client's `known_hash`).
    known: HashMap<PathBuf, String>,
}

/// One `build` as the host saw it.
struct Built {
    result: Value,
    reply: String,
    time: Duration,
}

impl Built {
    fn text(&self) -> &str {
        self.result["text"].as_str().unwrap_or("")
    }

    fn unchanged(&self) -> bool {
        self.result["unchanged"] == true
    }
}

impl Server {
    fn spawn(repo: &Monorepo) -> Self {
        Server { pipe: Pipe::spawn(&mut serve_command(repo)), next_id: 1, known: HashMap::default() }
    }

    /// `build` for `cwd`, passing the hash of the text this client already has for it.
    fn build(&mut self, cwd: &Path) -> Built {
        let mut params = json!({ "cwd": cwd });
        if let Some(hash) = self.known.get(cwd) {
            params["known_hash"] = json!(hash);
        }
        let request = json!({ "jsonrpc": "2.0", "id": self.next_id, "method": "build", "params": params });
        self.next_id += 1;
        let time = self.pipe.round_trip(&request.to_string());
        let reply = self.pipe.line.trim_end_matches('\n').to_owned();
        let mut value: Value = serde_json::from_str(&reply).expect("the reply is JSON");
        let result = value.get_mut("result").map_or_else(|| panic!("build failed: {reply}"), Value::take);
        let hash = result["hash"].as_str().expect("hash").to_owned();
        self.known.insert(cwd.to_path_buf(), hash);
        Built { result, reply, time }
    }

    /// The server's peak resident set so far (`VmHWM`), in KiB.
    fn peak_rss_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pipe.pid())).ok()?;
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmHWM:"))?
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()
    }
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times.get(times.len() / 2).copied().unwrap_or_default()
}

fn human(time: Duration) -> String {
    let seconds = time.as_secs_f64();
    match seconds {
        s if s >= 1.0 => format!("{s:.2} s"),
        s if s >= 1e-3 => format!("{:.2} ms", s * 1e3),
        s => format!("{:.0} µs", s * 1e6),
    }
}

fn mib(kib: Option<u64>) -> String {
    kib.map_or_else(|| "n/a".to_owned(), |kib| format!("{:.1} MiB", kib as f64 / 1024.0))
}

fn ratio(time: Duration, floor: Duration) -> String {
    format!("{:.2}×", time.as_secs_f64() / floor.as_secs_f64())
}

fn bytes(count: usize) -> String {
    if count >= 10 * 1024 { format!("{:.1} KB", count as f64 / 1000.0) } else { format!("{count} B") }
}

/// How many times each scenario runs: `CTXGRAPH_BENCH_<NAME>` overrides `default`.
fn count(name: &str, default: usize) -> usize {
    std::env::var(format!("CTXGRAPH_BENCH_{name}")).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// One row of the printed table.
struct Row {
    what: String,
    measured: String,
    floor: String,
    ratio: String,
    target: &'static str,
}

fn main() {
    let shape = Shape::from_env();
    let base = tempfile::tempdir().expect("temp dir");
    let (repo, generated) = monorepo::generate_reported(base.path(), shape);
    eprintln!("{generated}");
    // For profiling a server by hand against the same tree (heaptrack, perf).
    if std::env::var_os("CTXGRAPH_BENCH_KEEP").is_some() {
        eprintln!("kept the tree: {} (cwd {})", base.keep().display(), repo.cwd.display());
        return;
    }
    let mut rows = Vec::new();
    let mut echo = Echo::new();

    rows.push(first_build_vs_one_shot(&repo));

    let mut server = Server::spawn(&repo);
    server.build(&repo.cwd);
    rows.push(freshness(&mut server, &repo));
    rows.extend(unchanged_turn(&mut server, &repo, &mut echo));
    rows.extend(changes(&mut server, &repo, &mut echo));
    let churned = server.peak_rss_kib();
    drop(server);
    // New working directories on a server that built only the benchmark's own: its memory
    // is then what 50 working directories cost, not the churn of the rows above.
    let mut server = Server::spawn(&repo);
    server.build(&repo.cwd);
    rows.extend(new_cwds(&mut server, &repo, &mut echo));
    rows.push(Row {
        what: "peak RSS of the server that ran the freshness, unchanged and change rows".to_owned(),
        measured: mib(churned),
        floor: "–".to_owned(),
        ratio: "–".to_owned(),
        target: "",
    });

    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    println!();
    println!(
        "{} files, {} directories, depth {}, {} rule files; {cores} cores; through `ctxgraph serve --stdio`",
        shape.files, repo.dirs, shape.depth, shape.rules
    );
    println!("| what a host sees | measured | floor (same run) | ÷ floor | target |");
    println!("|---|---:|---:|---:|---|");
    for row in rows {
        println!("| {} | {} | {} | {} | {} |", row.what, row.measured, row.floor, row.ratio, row.target);
    }
}

/// (e) A fresh `serve` answering its first `build` (process start included) against a
/// one-shot `ctxgraph build` of the same directory (process start and exit included).
fn first_build_vs_one_shot(repo: &Monorepo) -> Row {
    let runs = count("FIRST_BUILDS", 5);
    let mut serve = Vec::new();
    let mut one_shot = Vec::new();
    for _ in 0..runs {
        // Alternate, so both see the same page cache and machine load.
        let start = Instant::now();
        let mut server = Server::spawn(repo);
        server.build(&repo.cwd);
        serve.push(start.elapsed());
        drop(server);

        let start = Instant::now();
        let output = Command::new(CTXGRAPH)
            .args(["build", "--cwd"])
            .arg(&repo.cwd)
            .current_dir(&repo.root)
            .env_clear()
            .env("HOME", &repo.home)
            .output()
            .expect("ctxgraph build");
        one_shot.push(start.elapsed());
        assert!(
            output.status.success(),
            "ctxgraph build failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let (serve, one_shot) = (median(serve), median(one_shot));
    Row {
        what: "first build inside `serve` (spawn to reply) vs a one-shot `ctxgraph build`".to_owned(),
        measured: human(serve),
        floor: human(one_shot),
        ratio: ratio(serve, one_shot),
        target: "≤ 1.2×",
    }
}

/// (a) Write, then build at once: the reply must show the write. Three kinds of write in
/// turn: a rule on the working directory's walk edited, a `**`-matched file added, and
/// that file removed.
fn freshness(server: &mut Server, repo: &Monorepo) -> Row {
    let tries = count("FRESHNESS_TRIES", 300);
    let rule = &repo.rule_on_walk;
    let original = std::fs::read_to_string(rule).expect("rule");
    let added = repo.deep_dir.join("fresh.rules.md");
    let mut stale = 0;
    let mut times = Vec::new();
    for i in 0..tries {
        let marker = format!("freshness marker {i}");
        let fresh: fn(&Built, &str) -> bool = match i % 3 {
            0 => {
                std::fs::write(rule, format!("{original}{marker}\n")).expect("edit");
                |built: &Built, marker: &str| built.text().contains(marker)
            }
            1 => {
                std::fs::write(&added, format!("{marker}\n")).expect("add");
                |built: &Built, marker: &str| built.text().contains(marker)
            }
            _ => {
                std::fs::remove_file(&added).expect("remove");
                // The text still has the edited rule (i - 2), not the removed file (i - 1).
                |built: &Built, _: &str| !built.unchanged() && !built.text().contains("fresh.rules.md")
            }
        };
        let built = server.build(&repo.cwd);
        times.push(built.time);
        if !fresh(&built, &marker) {
            stale += 1;
        }
    }
    std::fs::write(rule, &original).expect("restore");
    let _ = std::fs::remove_file(&added);
    server.build(&repo.cwd);
    Row {
        what: format!("a build sent right after a write ({tries} tries: edit, add, remove)"),
        measured: format!("**{stale} stale**"),
        floor: "–".to_owned(),
        ratio: format!("median {}", human(median(times))),
        target: "0 stale",
    }
}

/// (b) A turn where nothing changed, with `known_hash`: latency and reply size against the
/// echo of that reply; the full reply (no `known_hash`) beside it.
fn unchanged_turn(server: &mut Server, repo: &Monorepo, echo: &mut Echo) -> Vec<Row> {
    let samples = count("SAMPLES", 300);
    server.build(&repo.cwd);
    // Each turn is followed by an echo of its reply, so that the floor is measured under the
    // same conditions (the VM's speed drifts within a run).
    let (mut times, mut floors) = (Vec::new(), Vec::new());
    let mut reply = String::new();
    for _ in 0..samples {
        let built = server.build(&repo.cwd);
        assert!(built.unchanged(), "nothing changed, yet the reply has text: {}", built.reply);
        times.push(built.time);
        floors.push(echo.once(&built.reply));
        reply = built.reply;
    }
    let (time, floor) = (median(times), median(floors));

    // The same turn for a client that keeps nothing: the whole text and every block.
    let mut full = Vec::new();
    let mut full_reply = String::new();
    for _ in 0..samples / 3 {
        server.known.remove(&repo.cwd);
        let built = server.build(&repo.cwd);
        full.push(built.time);
        full_reply = built.reply;
    }
    let full_time = median(full);
    let full_floor = echo.floor(&full_reply, samples / 3);
    vec![
        Row {
            what: format!("unchanged turn with `known_hash` (reply {})", bytes(reply.len())),
            measured: human(time),
            floor: human(floor),
            ratio: ratio(time, floor),
            target: "≤ 1.5× echo, < 300 bytes",
        },
        Row {
            what: format!("unchanged turn without `known_hash` (reply {})", bytes(full_reply.len())),
            measured: human(full_time),
            floor: human(full_floor),
            ratio: ratio(full_time, full_floor),
            target: "",
        },
    ]
}

/// A directory off the working directory's walk, about half way down, with a `**`-matched
/// rule file somewhere below it: renaming it changes those rules' paths in the prompt.
fn rename_candidate(repo: &Monorepo) -> PathBuf {
    let walk: Vec<&Path> = repo.cwd.ancestors().take_while(|dir| dir.starts_with(&repo.root)).collect();
    for dir in walk.iter().rev().skip(walk.len() / 2) {
        let sibling = dir.parent().expect("below the root").join("d1");
        if sibling != *dir && has_glob_rule(&sibling) {
            return sibling;
        }
    }
    panic!("no directory with a rule file below it off the walk");
}

fn has_glob_rule(dir: &Path) -> bool {
    std::fs::read_dir(dir).expect("list").map(|entry| entry.expect("entry").path()).any(|path| {
        path.to_str().is_some_and(|p| p.ends_with(".rules.md")) || (path.is_dir() && has_glob_rule(&path))
    })
}

/// A change made before a timed build (returning text the reply must then contain), or
/// its undoing.
type Step<'a> = Box<dyn Fn(usize) -> String + 'a>;

/// (c) One change, then a build: time, freshness, and the echo floor of the reply.
fn changes(server: &mut Server, repo: &Monorepo, echo: &mut Echo) -> Vec<Row> {
    let tries = count("CHANGE_TRIES", 20);
    // The generator puts an AGENTS.md on every other level of the walk: the nearest gap.
    let on_walk = repo
        .cwd
        .ancestors()
        .map(|dir| dir.join("AGENTS.md"))
        .find(|rule| !rule.exists())
        .expect("a level without AGENTS.md");
    let renamed = rename_candidate(repo);
    let renamed_to = renamed.with_file_name("d1-renamed");
    let added = repo.deep_dir.join("added.rules.md");

    let scenarios: [(&str, &str, Step, Step); 3] = [
        (
            "one `**`-matched file added",
            "≤ 20 ms",
            Box::new(|i| {
                std::fs::write(&added, format!("added rule {i}\n")).expect("add");
                format!("added rule {i}")
            }),
            Box::new(|_| {
                std::fs::remove_file(&added).expect("remove");
                String::new()
            }),
        ),
        (
            "an `AGENTS.md` added on the cwd's walk",
            "≤ 20 ms",
            Box::new(|i| {
                std::fs::write(&on_walk, format!("walk rule {i}\n")).expect("add");
                format!("walk rule {i}")
            }),
            Box::new(|_| {
                std::fs::remove_file(&on_walk).expect("remove");
                String::new()
            }),
        ),
        (
            "a directory renamed",
            "≤ 100 ms",
            Box::new(|_| {
                std::fs::rename(&renamed, &renamed_to).expect("rename");
                format!("{}/", renamed_to.display())
            }),
            Box::new(|_| {
                std::fs::rename(&renamed_to, &renamed).expect("rename back");
                String::new()
            }),
        ),
    ];
    let mut rows = Vec::new();
    for (what, target, change, undo) in scenarios {
        let mut times = Vec::new();
        let mut stale = 0;
        let mut reply = String::new();
        for i in 0..tries {
            let expect = change(i);
            let built = server.build(&repo.cwd);
            times.push(built.time);
            stale += usize::from(!built.text().contains(&expect));
            reply = built.reply;
            undo(i);
            server.build(&repo.cwd);
        }
        let time = median(times);
        let floor = echo.floor(&reply, 50);
        let fresh = if stale == 0 { "fresh".to_owned() } else { format!("**{stale} of {tries} stale**") };
        rows.push(Row {
            what: format!("{what} ({fresh}, reply {})", bytes(reply.len())),
            measured: human(time),
            floor: human(floor),
            ratio: ratio(time, floor),
            target,
        });
    }
    rows
}

/// Leaves of the tree spread evenly over it (the `index`-th of `count`), named by their
/// path of `d0`/`d1` choices; never the benchmark's own working directory (leaf 0).
fn leaf(repo: &Monorepo, depth: usize, index: usize, count: usize) -> PathBuf {
    let leaves = 1usize << depth;
    let n = 1 + index * (leaves - 1) / count;
    let mut dir = repo.root.clone();
    for level in (0..depth).rev() {
        dir.push(if (n >> level) & 1 == 0 { "d0" } else { "d1" });
    }
    dir
}

/// (d) The first build of 50 new working directories in the built tree, then the server's
/// peak memory (read from `/proc`).
fn new_cwds(server: &mut Server, repo: &Monorepo, echo: &mut Echo) -> Vec<Row> {
    let cwds = count("CWDS", 50);
    let depth = repo.cwd.strip_prefix(&repo.root).expect("below the root").components().count();
    let mut times = Vec::new();
    let mut reply = String::new();
    for index in 0..cwds {
        let cwd = leaf(repo, depth, index, cwds);
        let built = server.build(&cwd);
        times.push(built.time);
        reply = built.reply;
    }
    let slowest = times.iter().max().copied().unwrap_or_default();
    let time = median(times);
    let floor = echo.floor(&reply, 50);
    let peak = server.peak_rss_kib();
    vec![
        Row {
            what: format!(
                "first build of a new cwd in the built tree ({cwds} cwds, reply {})",
                bytes(reply.len())
            ),
            measured: format!("{} (slowest {})", human(time), human(slowest)),
            floor: human(floor),
            ratio: ratio(time, floor),
            target: "≤ 20 ms",
        },
        Row {
            what: format!("peak RSS (`VmHWM`) of a fresh server after building {} cwds", cwds + 1),
            measured: mib(peak),
            floor: "–".to_owned(),
            ratio: "–".to_owned(),
            target: "≤ 48 MiB",
        },
    ]
}
