//! Loading and merging a config whose objects hold many keys: the cost must grow linearly
//! with the key count (it was quadratic: 40 000 keys in one object took 270 times as long
//! as 4 000). `cargo bench -p ctxgraph-opencode --bench config_keys`; compare the
//! per-key time across sizes.

use std::hint::black_box;
use std::path::{Path, PathBuf};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ctxgraph_opencode::config::tree::merge_concat;
use ctxgraph_opencode::config::{ConfigSource, SourceKind, load_text};
use ctxgraph_opencode::substitute::Context;

/// `{"agent": {"k0": {...}, …}}` with one agent per number in `keys`.
fn config(keys: std::ops::Range<usize>) -> String {
    let agents: Vec<String> =
        keys.map(|i| format!("\"k{i}\": {{\"model\": \"p/m{i}\", \"temperature\": 0.{i}}}")).collect();
    format!("{{\"agent\": {{{}}}}}", agents.join(",\n"))
}

fn load_and_merge(c: &mut Criterion) {
    let env = |_: &str| None;
    let read = |_: &Path| -> Result<Option<String>, String> { Ok(None) };
    let dir = PathBuf::from("/repo");
    let cx = Context { env: &env, read: &read, dir: &dir, os_home: Path::new("/home") };
    let source = ConfigSource::virtual_source(SourceKind::Project, "opencode.json", dir.clone());
    let mut group = c.benchmark_group("config_keys");
    group.sample_size(10);
    for keys in [4_000, 16_000, 40_000] {
        // Two layers that share half their keys, so merging both adds and overrides.
        let (first, second) = (config(0..keys), config(keys / 2..keys + keys / 2));
        group.throughput(Throughput::Elements(keys as u64));
        group.bench_with_input(BenchmarkId::from_parameter(keys), &keys, |b, _| {
            b.iter(|| {
                let mut merged = load_text(&first, &source, &cx, true).expect("valid").tree.expect("tree");
                let later = load_text(&second, &source, &cx, true).expect("valid").tree.expect("tree");
                merge_concat(&mut merged, later);
                black_box(merged)
            });
        });
    }
    group.finish();
}

criterion_group!(benches, load_and_merge);
criterion_main!(benches);
