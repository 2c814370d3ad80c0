//! Incrementality of the Codex profile: a change re-executes only the queries that looked
//! at it, and the message equals what a fresh engine builds.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use ctxgraph_engine::{ChangeEvent, Engine, HostEnv};
use ctxgraph_queries::system::MemorySystem;
use ctxgraph_test_support::fixture::fixed_host;

const CWD: &str = "/repo/pkg/api";

fn host() -> HostEnv {
    fixed_host("/home/u")
}

struct World {
    fs: Arc<MemorySystem>,
    engine: Engine,
}

fn world() -> World {
    let fs = Arc::new(MemorySystem::new());
    fs.write_file("/home/u/.codex/AGENTS.md", "global rules\n");
    fs.write_file("/home/u/.codex/config.toml", "project_doc_max_bytes = 4096\n");
    fs.init_git_repo("/repo");
    fs.write_file("/repo/AGENTS.md", "root rules\n");
    fs.write_file("/repo/pkg/api/AGENTS.md", "api rules\n");
    fs.write_file("/repo/pkg/api/src/lib.rs", "fn main() {}\n");
    let engine = Engine::new(fs.clone(), host());
    World { fs, engine }
}

fn message(engine: &mut Engine) -> String {
    let ws = engine.open(Path::new(CWD)).expect("cwd");
    engine.codex_context(ws, None).expect("codex").message.unwrap_or_default()
}

impl World {
    fn build(&mut self) -> (String, BTreeMap<String, u64>) {
        let before = self.engine.db().executions().totals();
        let text = message(&mut self.engine);
        let mut executed = self.engine.db().executions().totals();
        for (query, count) in &before {
            if let Some(now) = executed.get_mut(query) {
                *now -= count;
            }
        }
        executed.retain(|_, count| *count > 0);
        (text, executed)
    }

    fn change(&mut self, event: ChangeEvent) -> (String, BTreeMap<String, u64>) {
        self.engine.apply_changes(&[event]);
        let built = self.build();
        assert_eq!(built.0, message(&mut Engine::new(self.fs.clone(), host())), "warm and fresh differ");
        built
    }
}

fn counts(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs.iter().map(|(name, count)| ((*name).to_owned(), *count)).collect()
}

#[test]
fn nothing_changed_executes_nothing() {
    let mut w = world();
    let (first, executed) = w.build();
    assert!(first.contains("api rules") && executed.contains_key("agents_context"), "{executed:?}");
    let (again, executed) = w.build();
    assert_eq!((again, executed), (first, counts(&[])));
}

#[test]
fn editing_a_rule_file_rereads_it_and_reassembles() {
    let mut w = world();
    w.build();
    w.fs.write_file("/repo/pkg/api/AGENTS.md", "api rules, edited\n");
    let (text, executed) = w.change(ChangeEvent::Modified("/repo/pkg/api/AGENTS.md".into()));
    assert!(text.contains("api rules, edited"), "{text}");
    assert_eq!(executed, counts(&[("agents_context", 1), ("file_bytes", 1)]));
}

#[test]
fn an_override_appearing_shadows_agents_md() {
    let mut w = world();
    w.build();
    w.fs.write_file("/repo/pkg/AGENTS.override.md", "pkg override\n");
    let (text, executed) = w.change(ChangeEvent::Created("/repo/pkg/AGENTS.override.md".into()));
    assert!(text.contains("pkg override"), "{text}");
    assert!(!executed.contains_key("config_budget"), "{executed:?}");
    assert!(!executed.contains_key("worktree"), "{executed:?}");
}

#[test]
fn editing_the_budget_reruns_the_config_and_the_assembly() {
    let mut w = world();
    w.build();
    w.fs.write_file("/home/u/.codex/config.toml", "project_doc_max_bytes = 4\n");
    let (text, executed) = w.change(ChangeEvent::Modified("/home/u/.codex/config.toml".into()));
    assert!(text.contains("root\n</INSTRUCTIONS>"), "{text}");
    assert_eq!(executed, counts(&[("agents_context", 1), ("config_budget", 1), ("file_bytes", 1)]));
}

#[test]
fn an_unrelated_file_changes_nothing() {
    let mut w = world();
    let (before, _) = w.build();
    w.fs.write_file("/repo/pkg/api/src/lib.rs", "fn main() { edited() }\n");
    let (after, executed) = w.change(ChangeEvent::Modified("/repo/pkg/api/src/lib.rs".into()));
    assert_eq!((after, executed), (before, counts(&[])));
}
