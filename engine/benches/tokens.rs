//! What token counting costs: `cargo bench -p ctxgraph-engine --bench tokens`.
//!
//! The `o200k_base` tables are built from the packed vocabulary (ctxgraph-tokens) the first time a
//! process counts, so `explain`, `lint` and `check` pay that once and
//! `build` never does. "first use" builds the tables afresh each iteration (inflating the
//! packed vocabulary, the maps, the pre-tokenising regex), which is that one-time cost; the
//! other rows count a prompt-sized text with the tables built.

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
    group.bench_function("first use (tables built from the packed vocabulary)", |b| {
        b.iter(|| black_box(O200k::build_tables()));
    });
    // Build the process's tables once, outside the measured loops.
    O200k.count("warm");
    for bytes in [10_000, 100_000] {
        let text = prompt(bytes);
        group.bench_function(format!("count {bytes} bytes"), |b| b.iter(|| O200k.count(black_box(&text))));
    }
    group.finish();
}

criterion_group!(benches, tokens);
criterion_main!(benches);
