//! `session rules --agent claude-code` on long synthetic transcripts (issue 46, item 5):
//! `cargo bench -p ctxgraph-engine --bench session_rules`.
//!
//! Each transcript is what Claude Code 2.1.332 writes (docs/profiles/claude-code.md CC40):
//! an `instructions` record with four rule files, then per step an assistant Read of a file in
//! one of 32 folders (a 2 KB result), the first Read in a folder attaching that folder's
//! `CLAUDE.md` (a `nested_memory` record and its reminder in the blob), and an `api-request`
//! extending the one before; halfway, a `--continue` request that lists the whole history
//! again, and at three quarters a `/compact` (a `compact_boundary`, a request that starts
//! over). A sample is what the CLI does after reading the file: a fresh engine over it,
//! `Engine::session_costs` (parse, rebuild every request, count tokens, sum) and the JSON
//! answer serialised. Criterion reports each size; the closing table gives each size's
//! median over the same run and the ratio to the smallest (linear: the ratio of the steps),
//! and the peak resident memory of one sample in a process of its own, above the process's
//! size once the transcript is generated (Linux: `VmHWM` reset through `/proc/self/clear_refs`).
//! `CTXGRAPH_BENCH_STEPS=a,b,…` picks other sizes (default 1000,5000).

// A benchmark's output is its report; its sizes are far below f64's exact integers.
#![allow(clippy::print_stdout, clippy::cast_precision_loss)]

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::Criterion;
use ctxgraph_db::system::MemorySystem;
use ctxgraph_engine::{Agent, Engine, HostEnv};
use serde_json::json;

const FOLDERS: usize = 32;
const ROOT: &str = "/w/proj";

/// A transcript of `steps` main-loop requests.
fn transcript(steps: usize) -> String {
    let mut out = String::new();
    let mut line = |value: serde_json::Value| {
        let _ = writeln!(out, "{value}");
    };
    let files: Vec<serde_json::Value> = ["CLAUDE.md", ".claude/rules/a.md", ".claude/rules/b.md", "CLAUDE.local.md"]
        .iter()
        .map(|f| json!({"path": format!("{ROOT}/{f}"), "type": "Project", "content": format!("rules of {f}\n").repeat(20).trim_end()}))
        .collect();
    let first = files
        .iter()
        .map(|f| {
            format!(
                "Contents of {} (label):\n\n{}",
                f["path"].as_str().unwrap_or_default(),
                f["content"].as_str().unwrap_or_default()
            )
        })
        .collect::<Vec<_>>()
        .join("\n\n");
    line(json!({"type": "attachment", "cwd": ROOT, "attachment": {"type": "instructions", "files": files}}));
    let first_message = json!({"role": "user", "content": [
        {"type": "text", "text": format!("<system-reminder>\npreamble\n\n{first}\n</system-reminder>")},
        {"type": "text", "text": "start"}]});
    line(json!({"type": "api-request-blob", "hash": "h0", "message": first_message}));
    line(json!({"type": "api-request", "id": "r0", "keep": 0, "tail": ["h0"]}));
    let mut hashes = vec!["h0".to_owned()];
    let mut base = ("r0".to_owned(), 1usize);
    let mut attached = [false; FOLDERS];
    for step in 1..steps {
        let folder = step % FOLDERS;
        let file = format!("{ROOT}/dir{folder}/file{step}.ts");
        let tool = format!("toolu_{step}");
        line(
            json!({"type": "assistant", "cwd": ROOT, "message": {"id": format!("msg_{step}"), "role": "assistant",
            "content": [{"type": "tool_use", "id": tool, "name": "Read", "input": {"file_path": file}}]}}),
        );
        let mut result = "1\tconst x = 1;\n".repeat(140);
        if !attached[folder] {
            attached[folder] = true;
            let rule = format!("{ROOT}/dir{folder}/CLAUDE.md");
            let text = format!("rules of folder {folder}\n").repeat(30);
            line(json!({"type": "attachment", "attachment": {"type": "nested_memory", "path": rule}}));
            let _ = write!(
                result,
                "\n\n<system-reminder>\nContents of {rule}:\n\n{}\n\n</system-reminder>",
                text.trim_end()
            );
        }
        let blob = format!("b{step}");
        line(json!({"type": "api-request-blob", "hash": blob, "message": {"role": "user",
            "content": [{"type": "tool_result", "tool_use_id": tool, "content": result}]}}));
        let assistant = format!("a{step}");
        let id = format!("r{step}");
        if step == steps / 2 {
            // `--continue`: a request with no base that lists the whole history.
            hashes.extend([assistant, blob]);
            line(json!({"type": "api-request", "id": id, "keep": 0, "tail": hashes}));
            base = (id, hashes.len());
        } else if step == steps * 3 / 4 {
            // `/compact`: the history is replaced; the rules attach again on later reads.
            line(json!({"type": "system", "subtype": "compact_boundary"}));
            attached = [false; FOLDERS];
            hashes = vec!["h0".to_owned()];
            line(json!({"type": "api-request", "id": id, "keep": 0, "tail": hashes}));
            base = (id, 1);
        } else {
            hashes.extend([assistant.clone(), blob.clone()]);
            line(
                json!({"type": "api-request", "id": id, "base": base.0, "keep": base.1, "tail": [assistant, blob]}),
            );
            base = (id, base.1 + 2);
        }
    }
    out
}

/// What the CLI does once the file is read: a fresh engine, the costs, the JSON answer.
fn sample(text: &str) -> (Duration, usize) {
    let fs = MemorySystem::new();
    fs.write_file(Path::new("/w/session.jsonl"), text.as_bytes().to_vec());
    let env = HostEnv::fixed(PathBuf::from("/w/home"));
    let start = Instant::now();
    let mut engine = Engine::new(Arc::new(fs), env);
    let ws = engine.open(Path::new("/w")).expect("open");
    let costs = engine.session_costs(ws, Agent::ClaudeCode, Path::new("/w/session.jsonl")).expect("costs");
    let json = serde_json::to_string(&costs).expect("JSON");
    let took = start.elapsed();
    black_box(&json);
    (took, costs.steps.len())
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// Set in a child process: the number of steps of the one sample it measures.
const RSS_VAR: &str = "CTXGRAPH_BENCH_RSS_STEPS";

#[path = "common/rss.rs"]
mod rss;
use rss::status_bytes;

/// The child: one sample of `steps`, its peak RSS above the baseline printed.
fn measure_rss(steps: usize) {
    let text = transcript(steps);
    // Reset the peak to the current size, so generating the transcript does not count.
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let baseline = status_bytes("VmRSS:");
    black_box(sample(&text));
    println!("{}", status_bytes("VmHWM:").saturating_sub(baseline));
}

/// One sample's peak RSS above its baseline, in a process of its own.
fn peak_in_child(steps: usize) -> u64 {
    let exe = std::env::current_exe().expect("the bench's own executable");
    let output = std::process::Command::new(exe).env(RSS_VAR, steps.to_string()).output().expect("child");
    String::from_utf8_lossy(&output.stdout).lines().last().and_then(|l| l.trim().parse().ok()).unwrap_or(0)
}

fn main() {
    if let Some(steps) = std::env::var(RSS_VAR).ok().and_then(|s| s.parse().ok()) {
        return measure_rss(steps);
    }
    let sizes: Vec<usize> = std::env::var("CTXGRAPH_BENCH_STEPS")
        .ok()
        .map_or_else(|| vec![1000, 5000], |s| s.split(',').filter_map(|n| n.trim().parse().ok()).collect());
    let transcripts: Vec<(usize, String)> = sizes.iter().map(|&n| (n, transcript(n))).collect();
    let mut criterion = Criterion::default().configure_from_args().sample_size(10);
    let mut medians = Vec::new();
    for (steps, text) in &transcripts {
        assert_eq!(sample(text).1, *steps, "every request is a step");
        let mut samples = Vec::new();
        criterion.bench_function(&format!("session rules, {steps} steps"), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let (took, _) = sample(text);
                    samples.push(took);
                    total += took;
                }
                total
            });
        });
        let peak = peak_in_child(*steps);
        medians.push((*steps, text.len(), median(samples), peak));
    }
    println!("\n| steps | transcript | median | ÷ smallest (steps ratio) | peak RSS above baseline |");
    println!("|---:|---:|---:|---:|---:|");
    let (first_steps, _, first, _) = medians[0];
    for (steps, bytes, took, peak) in &medians {
        println!(
            "| {steps} | {:.1} MB | {:.0} ms | {:.2}× ({:.0}×) | {:.1} MB |",
            *bytes as f64 / 1e6,
            took.as_secs_f64() * 1e3,
            took.as_secs_f64() / first.as_secs_f64(),
            *steps as f64 / first_steps as f64,
            *peak as f64 / 1e6
        );
    }
}
