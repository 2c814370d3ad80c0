//! Workspace memory as a stage of the graph: in the prompt only when enabled, and an edit to
//! one store file re-executes only that file's parse, its block and the assembly.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use ctxgraph_db::system::MemorySystem;
use ctxgraph_engine::{ChangeEvent, Engine, HostEnv};
use ctxgraph_memory::recall::Recall;

const FACTS: &str = "/w/.opencode/memory/facts.jsonl";
const DAY: i64 = 86_400_000;
const NOW: i64 = 20_786 * DAY;

fn host() -> HostEnv {
    HostEnv::fixed("/home/u")
}

fn fact(id: &str, text: &str) -> String {
    format!(
        "{{\"type\":\"fact\",\"v\":1,\"id\":\"{id}\",\"text\":\"{text}\",\"scope\":\"project\",\"source\":\"explicit\",\"hash\":\"h\",\"createdAt\":{NOW},\"updatedAt\":{NOW}}}\n"
    )
}

fn world(config: &str) -> (Arc<MemorySystem>, Engine) {
    let fs = Arc::new(MemorySystem::new());
    fs.create_dir_all("/home/u");
    fs.write_file("/w/.git/HEAD", "ref: refs/heads/main\n");
    fs.write_file("/w/AGENTS.md", "rules");
    fs.write_file("/w/opencode.json", config);
    fs.write_file(FACTS, fact("fct_01", "Use pnpm, not npm"));
    fs.write_file(
        "/w/.opencode/memory/observations.jsonl",
        format!("{{\"v\":1,\"id\":\"obs_01\",\"tool\":\"bash\",\"outcome\":\"error\",\"kind\":\"gotcha\",\"l0\":\"pnpm install needs the lockfile\",\"evidenceHash\":\"e\",\"textHash\":\"t\",\"createdAt\":{NOW}}}\n"),
    );
    let engine = Engine::new(fs.clone(), host());
    (fs, engine)
}

fn text(engine: &mut Engine) -> String {
    let ws = engine.open(Path::new("/w")).unwrap();
    engine.system_prompt(ws, None).unwrap().text()
}

#[test]
fn memory_is_in_the_prompt_only_when_enabled() {
    let (_fs, mut off) = world("{}");
    let (_fs, mut unset) = world(r#"{"memory": {"enabled": false}, "memory_model": "a/b"}"#);
    let (_fs, mut on) = world(r#"{"memory": {"enabled": true}}"#);
    let without = text(&mut off);
    assert!(!without.contains("<memory>"));
    assert_eq!(text(&mut unset), without, "memory keys alone change nothing");
    let with = text(&mut on);
    assert!(with.starts_with(&without), "memory is appended after the instructions");
    assert!(
        with.ends_with(
            "## Relevant Observations\n- (bash, gotcha) pnpm install needs the lockfile\n</memory>"
        ),
        "{with}"
    );
    assert!(with.contains("- [project] Use pnpm, not npm\n"));
}

#[test]
fn the_budget_comes_from_config() {
    let (_fs, mut engine) = world(r#"{"memory": {"enabled": true, "maxTotalChars": 300}}"#);
    let ws = engine.open(Path::new("/w")).unwrap();
    let memory = engine.prompt_memory(ws).unwrap().unwrap();
    assert!(memory.chars <= 300, "{}", memory.chars);
}

/// Executions per query since `before`.
fn delta(engine: &Engine, before: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    let mut now = engine.db().executions().totals();
    for (query, count) in before {
        if let Some(n) = now.get_mut(query) {
            *n -= count;
        }
    }
    now.retain(|_, n| *n > 0);
    now
}

#[test]
fn editing_facts_reruns_only_the_facts_block_and_the_assembly() {
    let (fs, mut engine) = world(r#"{"memory": {"enabled": true}}"#);
    let ws = engine.open(Path::new("/w")).unwrap();
    let recall = Recall::new("pnpm", NOW);
    let first = engine.memory_recall(ws, recall.clone()).unwrap();
    assert_eq!(first.item_count(), 2);
    let _ = text(&mut engine);

    fs.write_file(
        FACTS,
        fact("fct_01", "Use pnpm, not npm") + &fact("fct_02", "pnpm store lives in ~/.pnpm"),
    );
    engine.apply_changes(&[ChangeEvent::Modified(FACTS.into())]);
    let before = engine.db().executions().totals();
    let second = engine.memory_recall(ws, recall).unwrap();
    assert_eq!(second.item_count(), 3);
    let executed: Vec<String> = delta(&engine, &before).into_keys().collect();
    assert_eq!(executed, ["fact_log", "facts_block", "file_bytes", "memory_context"]);

    // The build's own recall follows the same path (plus the prompt around it).
    assert!(text(&mut engine).contains("~/.pnpm"));
    let before = engine.db().executions().totals();
    fs.write_file(FACTS, fact("fct_01", "Use pnpm, not npm"));
    engine.apply_changes(&[ChangeEvent::Modified(FACTS.into())]);
    let prompt = text(&mut engine);
    assert!(!prompt.contains("~/.pnpm"));
    let executed: Vec<String> = delta(&engine, &before).into_keys().collect();
    assert_eq!(
        executed,
        ["fact_log", "facts_block", "file_bytes", "memory_context", "prompt_memory", "system_prompt"]
    );
}

/// The store refuses files past the limit recall reads (`record::MAX_FILE_BYTES`, which the
/// store's writes check): it must be the engine's, or a store file the store accepted could
/// be one recall cannot read.
#[test]
fn the_store_limit_is_the_engines() {
    assert_eq!(ctxgraph_memory::record::MAX_FILE_BYTES, ctxgraph_engine::MAX_FILE_BYTES);
}
