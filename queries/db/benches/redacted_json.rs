//! A `serve` reply's line, redacted, three ways in one run:
//! `cargo bench -p ctxgraph-db --bench redacted_json`.
//!
//! - `tree walk`: `serde_json::to_value`, [`Redactor::json_except`], `to_string` (how `serve`
//!   wrote replies from issue #43 until the one pass);
//! - `one pass`: [`Redactor::json_string_except`] (what `serve` does now);
//! - `unredacted`: `serde_json::to_string`, the floor no redaction can go under.
//!
//! The reply is shaped like the `build` reply of the 100 000-file tree in BENCHMARKS.md
//! ("What a host sees"): 267 blocks with their ids, kinds, sources, hashes, rule ids, reasons
//! and texts, about 141 KB of JSON of which the block and prompt texts are kept verbatim.

// A benchmark's output is its report.
#![allow(clippy::print_stderr)]

use std::hint::black_box;
use std::time::Duration;

use criterion::Criterion;
use ctxgraph_db::secrets::Redactor;
use serde::Serialize;

#[derive(Serialize)]
struct Block {
    id: String,
    kind: &'static str,
    source: Option<String>,
    start: usize,
    end: usize,
    hash: String,
    rule: &'static str,
    reason: String,
    text: String,
}

#[derive(Serialize)]
struct Reply {
    text: String,
    hash: String,
    blocks: Vec<Block>,
}

fn reply() -> Reply {
    let mut text = String::new();
    let blocks = (0..267)
        .map(|i| {
            let dirs = "d0/".repeat(i % 12);
            let path = format!("/tmp/.tmpXXXXXX/repo/{dirs}d{i}/rules-{i}.rules.md");
            let block = format!("# Rules {i}\n\nKeep module {i} small and its names plain.\n");
            let start = text.len();
            text.push_str(&block);
            Block {
                id: format!("file:{path}"),
                kind: "instruction",
                source: Some(path),
                start,
                end: text.len(),
                hash: blake3::hash(block.as_bytes()).to_hex().to_string(),
                rule: "I5",
                reason: format!(
                    "config instructions entry \"**/*.rules.md\" from /tmp/.tmpXXXXXX/repo/opencode.json, matched in {dirs}"
                ),
                text: block,
            }
        })
        .collect();
    Reply { hash: blake3::hash(text.as_bytes()).to_hex().to_string(), text, blocks }
}

fn main() {
    let reply = reply();
    let redactor = Redactor::default();
    let verbatim = &["text"][..];
    let tree_walk = |reply: &Reply| {
        let mut tree = serde_json::to_value(reply).expect("a reply serializes");
        redactor.json_except(&mut tree, verbatim);
        serde_json::to_string(&tree).expect("a tree serializes")
    };
    let one_pass = |reply: &Reply| redactor.json_string_except(reply, verbatim).expect("a reply serializes");
    assert_eq!(tree_walk(&reply), one_pass(&reply), "the one pass writes what the tree walk wrote");
    eprintln!("reply: {} bytes", one_pass(&reply).len());

    let mut c = Criterion::default().configure_from_args().warm_up_time(Duration::from_millis(500));
    let mut group = c.benchmark_group("a build reply's line");
    group.bench_function("tree walk", |b| b.iter(|| black_box(tree_walk(black_box(&reply)))));
    group.bench_function("one pass", |b| b.iter(|| black_box(one_pass(black_box(&reply)))));
    group.bench_function("unredacted", |b| {
        b.iter(|| black_box(serde_json::to_string(black_box(&reply)).expect("a reply serializes")));
    });
    group.finish();
    c.final_summary();
}
