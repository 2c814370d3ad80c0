//! docs/memory.md §16's offline evaluation: generated workspace histories (seeded), probes with
//! gold records, and the numbers the README quotes. It is also a regression gate: the
//! thresholds are the first green run's numbers, rounded down.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use ctxgraph_engine::HostEnv;
use ctxgraph_engine::{Engine, OsSystem};
use ctxgraph_memory::extract::{Evidence, Observed, Scripted, observe};
use ctxgraph_memory::recall::Recall;
use ctxgraph_memory::record::{FactSource, Note, Scope};
use ctxgraph_memory::render::BlockId;
use ctxgraph_memory::{Store, Stored};

/// `SplitMix64`: a seeded generator small enough to live in the test.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[usize::try_from(self.next() % items.len() as u64).unwrap()]
    }
}

const AREAS: &[&str] = &[
    "database",
    "linter",
    "formatter",
    "bundler",
    "logging",
    "migrations",
    "queue",
    "cache",
    "metrics",
    "tracing",
    "router",
    "templating",
    "auth",
    "secrets",
    "packaging",
    "containers",
    "scheduler",
    "search",
    "mailer",
    "storage",
    "frontend",
    "styling",
    "fixtures",
    "benchmarks",
    "profiling",
    "docs",
    "changelog",
    "releases",
    "translations",
    "payments",
];
const TOOLS: &[&str] = &[
    "postgres",
    "sqlite",
    "eslint",
    "biome",
    "prettier",
    "dprint",
    "vite",
    "webpack",
    "esbuild",
    "pino",
    "winston",
    "redis",
    "memcached",
    "prometheus",
    "jaeger",
    "axum",
    "actix",
    "tera",
    "minijinja",
    "keycloak",
    "vault",
    "docker",
    "podman",
    "cron",
    "meilisearch",
    "tantivy",
    "sendgrid",
    "minio",
    "tailwind",
    "insta",
    "criterion",
    "mdbook",
];
const NOISE: &[&str] = &[
    "prefers",
    "short",
    "answers",
    "explain",
    "diffs",
    "before",
    "commit",
    "review",
    "tabs",
    "spaces",
    "british",
    "spelling",
    "avoid",
    "emoji",
    "summaries",
    "bullet",
    "lists",
    "morning",
    "standups",
];

/// How one generated workspace did.
#[derive(Default)]
struct Score {
    probes: usize,
    hits_at_5: usize,
    reciprocal_rank: f64,
    stale: usize,
    abstain_probes: usize,
    abstained: usize,
    over_budget: usize,
    nondeterministic: usize,
    events: usize,
    model_calls: usize,
}

/// `a / b` for the metrics; the counts are small, so the conversions are exact.
#[allow(clippy::cast_precision_loss)]
fn ratio(a: usize, b: usize) -> f64 {
    a as f64 / b as f64
}

fn run_workspace(seed: u64, dir: &Path) -> Score {
    let mut rng = Rng(seed);
    let store = Store::new(dir, &BTreeMap::new()).with_sync(false).with_clock(|| 20_786 * 86_400_000);
    let mut current: BTreeMap<&str, (String, String)> = BTreeMap::new(); // area → (tool, id)
    let mut retired: Vec<String> = Vec::new();
    let mut tally = Score::default();
    // 60 sessions: remember a tool for an area, switch an area's tool (forget + remember),
    // or note a preference (noise).
    for _ in 0..60 {
        let area = rng.pick(AREAS);
        let tool = rng.pick(TOOLS);
        match (rng.next() % 10, current.get(area).cloned()) {
            (0..=1, _) => {
                let words: Vec<&str> = (0..5).map(|_| rng.pick(NOISE)).collect();
                let _ = store.remember(
                    &format!("User {}", words.join(" ")),
                    Scope::User,
                    "preference",
                    FactSource::Explicit,
                    None,
                );
            }
            (2..=4, Some((old_tool, old_id))) if old_tool != tool => {
                let gone = store.forget(&format!("forget that {area} uses {old_tool}"), None).unwrap();
                assert_eq!(gone, std::slice::from_ref(&old_id), "forget picks the {area} fact");
                retired.push(old_id);
                let text = format!("For {area}, the project uses {tool} (switched from {old_tool})");
                let done =
                    store.remember(&text, Scope::Project, "tooling", FactSource::Explicit, None).unwrap();
                current.insert(area, (tool.to_owned(), done.id().to_owned()));
            }
            (_, None) => {
                let text = format!("For {area}, the project uses {tool}");
                let done =
                    store.remember(&text, Scope::Project, "tooling", FactSource::Compaction, None).unwrap();
                if let Stored::Superseded { old, .. } = &done.stored {
                    retired.push(old.clone());
                }
                current.insert(area, (tool.to_owned(), done.id().to_owned()));
            }
            _ => {}
        }
    }
    // Tool events: a few distinct failures, each repeated (a retried command).
    let model = Scripted::new(|e: &Evidence| {
        vec![Note {
            kind: "gotcha".into(),
            l0: format!("{} failed: {}", e.tool, e.output),
            l1: String::new(),
            files: vec![],
            keywords: vec![],
        }]
    });
    for _ in 0..100 {
        let area = rng.pick(&AREAS[..8]);
        let evidence = Evidence {
            tool: "bash".into(),
            outcome: "error".into(),
            input: format!("make {area}"),
            output: format!("{area} target missing"),
        };
        if let Observed::Skipped { .. } = observe(&store, &evidence, None, &model).unwrap() {
            continue;
        }
        tally.events += 1;
    }
    tally.model_calls = model.calls();

    let mut engine = Engine::new(Arc::new(OsSystem), HostEnv::fixed("/nonexistent"));
    let ws = engine.open(dir).unwrap();
    for (area, (tool, gold)) in &current {
        let query = format!("which {area} tool do we use");
        let recall = Recall::new(query, 20_786 * 86_400_000);
        let context = engine.memory_recall(ws, recall.clone()).unwrap();
        tally.probes += 1;
        let facts: Vec<&str> = context
            .blocks
            .iter()
            .filter(|b| b.id == BlockId::Facts)
            .flat_map(|b| b.items.iter().map(|i| i.id.as_str()))
            .collect();
        if let Some(rank) = facts.iter().position(|id| id == gold) {
            tally.reciprocal_rank += 1.0 / ratio(rank + 1, 1);
            if rank < 5 {
                tally.hits_at_5 += 1;
            }
        }
        let text = &context.text;
        tally.stale += retired
            .iter()
            .filter(|id| context.blocks.iter().any(|b| b.items.iter().any(|i| &i.id == *id)))
            .count();
        assert!(text.contains(tool.as_str()), "{area}: {text}");
        if context.chars > recall.max_chars {
            tally.over_budget += 1;
        }
        let fresh = Engine::new(Arc::new(OsSystem), HostEnv::fixed("/nonexistent"));
        let mut fresh = fresh;
        let fresh_ws = fresh.open(dir).unwrap();
        if fresh.memory_recall(fresh_ws, recall).unwrap().text != context.text {
            tally.nondeterministic += 1;
        }
    }
    // Abstention: areas never stored must recall no fact.
    for area in AREAS.iter().filter(|a| !current.contains_key(*a)) {
        tally.abstain_probes += 1;
        let context = engine.memory_recall(ws, Recall::new(format!("which {area} tool"), 0)).unwrap();
        if context.blocks.iter().all(|b| b.id != BlockId::Facts) {
            tally.abstained += 1;
        }
    }
    // Small budgets: the clamp always fits.
    for max in [600, 1500, 4000] {
        let context = engine.memory_recall(ws, Recall { max_chars: max, ..Recall::new("", 0) }).unwrap();
        if context.chars > max || context.hard_cut {
            tally.over_budget += 1;
        }
    }
    tally
}

#[test]
#[allow(clippy::print_stderr)]
fn offline_evaluation() {
    let mut total = Score::default();
    for seed in 1..=5u64 {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let s = run_workspace(seed, &root);
        total.probes += s.probes;
        total.hits_at_5 += s.hits_at_5;
        total.reciprocal_rank += s.reciprocal_rank;
        total.stale += s.stale;
        total.abstain_probes += s.abstain_probes;
        total.abstained += s.abstained;
        total.over_budget += s.over_budget;
        total.nondeterministic += s.nondeterministic;
        total.events += s.events;
        total.model_calls += s.model_calls;
    }
    let recall_at_5 = ratio(total.hits_at_5, total.probes);
    let mrr = total.reciprocal_rank / ratio(total.probes, 1);
    let abstention = ratio(total.abstained, total.abstain_probes.max(1));
    let calls_per_100 = 100.0 * ratio(total.model_calls, total.events.max(1));
    eprintln!(
        "memory evaluation: {} probes, recall@5 {recall_at_5:.3}, MRR {mrr:.3}, stale leaks {}, abstention {abstention:.3} ({} probes), over budget {}, nondeterministic {}, model calls per 100 tool events {calls_per_100:.1}",
        total.probes, total.stale, total.abstain_probes, total.over_budget, total.nondeterministic
    );
    assert!(recall_at_5 >= 0.95, "recall@5 {recall_at_5}");
    assert!(mrr >= 0.9, "MRR {mrr}");
    assert_eq!(total.stale, 0, "retired facts never resurface");
    assert_eq!(total.over_budget, 0);
    assert_eq!(total.nondeterministic, 0);
    assert!(abstention >= 0.95, "abstention {abstention}");
    assert!(calls_per_100 <= 10.0, "{calls_per_100}");
}
