//! Incrementality of the Gemini CLI profile: a change re-executes only the queries that
//! looked at it, and the context equals what a fresh engine builds.

use std::path::Path;
use std::sync::Arc;

use ctxgraph_db::system::MemorySystem;
use ctxgraph_engine::{ChangeEvent, Engine};

use crate::agent_world::{World, counts};

const CWD: &str = "/repo/pkg/api";

fn world() -> World {
    let fs = Arc::new(MemorySystem::new());
    fs.write_file("/home/u/.gemini/GEMINI.md", "global rules\n");
    fs.init_git_repo("/repo");
    fs.write_file("/repo/GEMINI.md", "root rules\n@docs/style.md\n");
    fs.write_file("/repo/docs/style.md", "style\n");
    fs.write_file("/repo/pkg/api/GEMINI.md", "api rules\n");
    fs.write_file("/repo/pkg/api/src/lib.rs", "fn main() {}\n");
    World::new(fs, context)
}

fn context(engine: &mut Engine) -> String {
    let ws = engine.open(Path::new(CWD)).expect("cwd");
    // The query itself (the profile's answer runs more queries than the counts below name).
    ctxgraph_agents::gemini::gemini_context(engine.db(), ws).as_ref().expect("gemini").text()
}

#[test]
fn nothing_changed_executes_nothing() {
    let mut w = world();
    let (first, executed) = w.build();
    assert!(first.contains("api rules") && first.contains("style"), "{first}");
    assert!(executed.contains_key("gemini_context"), "{executed:?}");
    let (again, executed) = w.build();
    assert_eq!((again, executed), (first, counts(&[])));
}

#[test]
fn editing_a_context_file_reprocesses_that_file_only() {
    let mut w = world();
    w.build();
    let (text, executed) = w.edit("/repo/pkg/api/GEMINI.md", "api rules, edited\n");
    assert!(text.contains("api rules, edited"), "{text}");
    // The edited file's real path is asked again (a bump of its input can be a re-pointed
    // link): the same answer, so nothing after it re-runs for that.
    let expected = [("expanded_doc", 1), ("file_bytes", 1), ("gemini_context", 1), ("real_path_of", 1)];
    assert_eq!(executed, counts(&expected));
}

#[test]
fn editing_an_imported_file_reprocesses_its_importer() {
    let mut w = world();
    w.build();
    let (text, executed) = w.edit("/repo/docs/style.md", "style, edited\n");
    assert!(text.contains("style, edited"), "{text}");
    assert_eq!(executed, counts(&[("expanded_doc", 1), ("file_bytes", 1), ("gemini_context", 1)]));
}

#[test]
fn a_context_file_appearing_is_found_without_touching_settings() {
    let mut w = world();
    w.build();
    w.fs.write_file("/repo/pkg/GEMINI.md", "pkg rules\n");
    let (text, executed) = w.change(ChangeEvent::Created("/repo/pkg/GEMINI.md".into()));
    assert!(text.contains("pkg rules"), "{text}");
    assert!(!executed.contains_key("gemini_settings"), "{executed:?}");
    assert_eq!(executed.get("expanded_doc"), Some(&1), "only the new file is processed: {executed:?}");
}

#[test]
fn editing_the_settings_reruns_discovery() {
    let mut w = world();
    w.build();
    w.fs.write_file("/repo/pkg/api/AGENTS.md", "agents rules\n");
    w.fs.write_file("/home/u/.gemini/settings.json", "{\"context\": {\"fileName\": \"AGENTS.md\"}}\n");
    w.engine.apply_changes(&[ChangeEvent::Created("/repo/pkg/api/AGENTS.md".into())]);
    let (text, executed) = w.change(ChangeEvent::Created("/home/u/.gemini/settings.json".into()));
    assert!(text.contains("agents rules") && text.contains("api rules"), "{text}");
    assert_eq!(executed.get("gemini_settings"), Some(&1), "{executed:?}");
}

#[test]
fn an_unrelated_file_changes_nothing() {
    let mut w = world();
    let (before, _) = w.build();
    let (after, executed) = w.edit("/repo/pkg/api/src/lib.rs", "fn main() { edited() }\n");
    assert_eq!((after, executed), (before, counts(&[])));
}
