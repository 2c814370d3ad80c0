//! #24 D9: what a big `opencode.json` costs a plain build, in peak memory per byte of config
//! and in time: `cargo bench -p ctxgraph-engine --bench config`.
//!
//! Two shapes, as the audit found them: many agents (`{"agent": {"a0": {"model": …}, …}}`,
//! ~26 bytes per agent) and many providers (`{"provider": {"p0": {"models": {…}}, …}}`),
//! each at 1 MiB and at the limit ([`MAX_CONFIG_BYTES`], 4 MiB), and at 30 MB, which is
//! refused. The target (BENCHMARKS.md, "Big configs"): a config at the limit builds with at
//! most 160 bytes of peak RSS per byte of config (0.7 GB in all), in at most 5 s on the
//! shared 2-core machine measured; a larger one is refused with at most 4 bytes per byte
//! (the file is read and decoded, then measured).
//!
//! Each case runs in a child process (this benchmark re-run with `CONFIG_BENCH_CASE`), so
//! its peak (`VmHWM`) is its own and no heap freed by an earlier case hides a later one's.
//! Linux only (the peak comes from `/proc/self/status`).
//!
//! Not criterion: one build per case is the measurement (seconds each), and the memory
//! figure has no distribution to sample.

// A benchmark's output is its report.
#![allow(clippy::print_stdout)]
// Byte counts and KiB figures are far below 2^52, where `f64` starts to round.
#![allow(clippy::cast_precision_loss)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use ctxgraph_engine::{Engine, HostEnv, OsSystem};
use ctxgraph_opencode::config::MAX_CONFIG_BYTES;

const CASE_VAR: &str = "CONFIG_BENCH_CASE";

/// The shapes measured.
#[derive(Clone, Copy)]
enum Shape {
    Agents,
    Providers,
}

impl Shape {
    fn name(self) -> &'static str {
        match self {
            Shape::Agents => "agents",
            Shape::Providers => "providers",
        }
    }

    fn parse(name: &str) -> Option<Self> {
        match name {
            "agents" => Some(Shape::Agents),
            "providers" => Some(Shape::Providers),
            _ => None,
        }
    }

    /// A config of this shape, `bytes` long or a few bytes under.
    fn config(self, bytes: usize) -> String {
        let (open, close) = match self {
            Shape::Agents => ("{\"agent\": {", "}}"),
            Shape::Providers => ("{\"provider\": {", "}}"),
        };
        let mut text = String::with_capacity(bytes);
        text.push_str(open);
        let mut entry = String::new();
        for i in 0.. {
            entry.clear();
            let comma = if i == 0 { "" } else { "," };
            match self {
                Shape::Agents => {
                    let _ = write!(entry, "{comma}\"a{i}\":{{\"model\":\"p/m{}\"}}", i % 7);
                }
                Shape::Providers => {
                    let _ = write!(entry, "{comma}\"p{i}\":{{\"models\":{{");
                    for j in 0..8 {
                        let _ = write!(
                            entry,
                            "{}\"m{j}\":{{\"name\":\"model {j}\",\"limit\":{{\"context\":{},\"output\":{}}}}}",
                            if j == 0 { "" } else { "," },
                            1000 + j,
                            10 + j
                        );
                    }
                    entry.push_str("}}");
                }
            }
            if text.len() + entry.len() + close.len() > bytes {
                break;
            }
            text.push_str(&entry);
        }
        text.push_str(close);
        text
    }
}

/// What one case measured.
struct Measured {
    bytes: usize,
    accepted: bool,
    seconds: f64,
    /// Peak RSS minus the RSS before the build, in bytes.
    peak_over_baseline: u64,
    peak: u64,
}

#[path = "common/rss.rs"]
mod rss;
use rss::status_bytes;

/// The child: builds once over a generated config and prints its measurements.
fn run_case(shape: Shape, bytes: usize) {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    let repo = root.join("repo");
    for git in [".git/objects", ".git/refs"] {
        std::fs::create_dir_all(repo.join(git)).expect("mkdir");
    }
    std::fs::write(repo.join(".git/HEAD"), "ref: refs/heads/main\n").expect("HEAD");
    let text = shape.config(bytes);
    let written = text.len();
    std::fs::write(repo.join("opencode.json"), text).expect("config");
    let baseline = status_bytes("VmRSS:");
    let started = Instant::now();
    let accepted = build(&root, &repo);
    let seconds = started.elapsed().as_secs_f64();
    let peak = status_bytes("VmHWM:");
    println!("{written} {accepted} {seconds} {} {peak}", peak.saturating_sub(baseline));
}

fn build(root: &Path, cwd: &Path) -> bool {
    let env = HostEnv {
        vars: std::collections::BTreeMap::default(),
        home: root.join("home"),
        platform: "linux".into(),
        date: "Tue Dec 01 2026".into(),
    };
    let mut engine = Engine::new(Arc::new(OsSystem), env);
    let Ok(ws) = engine.open(cwd) else { return false };
    engine.system_prompt(ws, None).is_ok()
}

/// The parent: runs each case in a child process and reads its line back.
fn measure(shape: Shape, bytes: usize) -> Measured {
    let exe: PathBuf = std::env::current_exe().expect("this benchmark's path");
    let output =
        Command::new(exe).env(CASE_VAR, format!("{} {bytes}", shape.name())).output().expect("run the case");
    let line = String::from_utf8_lossy(&output.stdout);
    let fields: Vec<&str> = line.split_whitespace().collect();
    let [written, accepted, seconds, over, peak] = fields.as_slice() else {
        panic!("case {} {bytes} printed {line:?}", shape.name());
    };
    Measured {
        bytes: written.parse().expect("bytes"),
        accepted: *accepted == "true",
        seconds: seconds.parse().expect("seconds"),
        peak_over_baseline: over.parse().expect("peak"),
        peak: peak.parse().expect("peak"),
    }
}

fn main() {
    if let Ok(case) = std::env::var(CASE_VAR) {
        let (shape, bytes) = case.split_once(' ').expect("shape and size");
        run_case(Shape::parse(shape).expect("shape"), bytes.parse().expect("size"));
        return;
    }
    // `cargo bench` passes `--bench`; a filter is not supported (four cases, seconds each).
    println!(
        "| shape | config bytes | loaded | time | peak RSS over baseline | per config byte | peak RSS |"
    );
    println!("|---|---:|---|---:|---:|---:|---:|");
    for shape in [Shape::Agents, Shape::Providers] {
        for bytes in [1024 * 1024, MAX_CONFIG_BYTES, 30_000_000] {
            let m = measure(shape, bytes);
            println!(
                "| {} | {} | {} | {:.2} s | {:.0} MiB | {:.0} B/B | {:.0} MiB |",
                shape.name(),
                m.bytes,
                if m.accepted { "yes" } else { "refused" },
                m.seconds,
                m.peak_over_baseline as f64 / (1024.0 * 1024.0),
                m.peak_over_baseline as f64 / m.bytes as f64,
                m.peak as f64 / (1024.0 * 1024.0),
            );
        }
    }
}
