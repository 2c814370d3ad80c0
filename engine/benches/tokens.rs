//! What token counting costs: `cargo bench -p ctxgraph-engine --bench tokens`.
//!
//! The `o200k_base` table is built from the packed vocabulary (ctxgraph-tokens) the first time a
//! process counts, so `explain`, `lint` and `check` pay that once and
//! `build` never does. "first use" builds it afresh each iteration (inflating the packed
//! vocabulary, the rank table, the pre-tokenising regex), which is that one-time cost; beside
//! it, tiktoken-rs building its `CoreBPE` (what the first count cost before ctxgraph-tokens
//! counted by itself). Then a prompt-sized text is encoded (`encode`: a text's first count)
//! by ctxgraph-tokens and by tiktoken-rs, and counted again (`count`: the memo by hash that a
//! recount hits).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use ctxgraph_db::tokens::TokenCounter;
use ctxgraph_engine::O200k;

fn prompt(bytes: usize) -> String {
    let paragraph = "## Testing\n\nRun `cargo test --workspace` before each commit; snapshots live beside \
                     their tests (insta). Never call the network from a test: use 127.0.0.1.\n\n";
    paragraph.repeat(bytes / paragraph.len() + 1)[..bytes].to_owned()
}

fn tokens(c: &mut Criterion) {
    let mut group = c.benchmark_group("o200k");
    group.sample_size(10);
    group.bench_function("first use (table built from the packed vocabulary)", |b| {
        b.iter(|| black_box(O200k::build_tables()));
    });
    group.bench_function("first use, tiktoken-rs (CoreBPE built from its own data)", |b| {
        b.iter(|| black_box(tiktoken_rs::o200k_base().expect("tiktoken-rs's o200k_base")));
    });
    // Build the process's tables once, outside the measured loops.
    O200k.count("warm");
    let reference = tiktoken_rs::o200k_base().expect("tiktoken-rs's o200k_base");
    for bytes in [10_000, 100_000] {
        let text = prompt(bytes);
        assert_eq!(O200k::count_unmemoised(&text), reference.encode_ordinary(&text).len());
        group.bench_function(format!("encode {bytes} bytes"), |b| {
            b.iter(|| O200k::count_unmemoised(black_box(&text)));
        });
        group.bench_function(format!("encode {bytes} bytes, tiktoken-rs"), |b| {
            b.iter(|| reference.encode_ordinary(black_box(&text)).len());
        });
        group.bench_function(format!("count {bytes} bytes again (memo)"), |b| {
            b.iter(|| O200k.count(black_box(&text)));
        });
    }
    group.finish();
}

criterion_group!(benches, tokens);
criterion_main!(benches);
