//! Incrementality of the Codex profile: a change re-executes only the queries that looked
//! at it, and the message equals what a fresh engine builds.

use std::path::Path;
use std::sync::Arc;

use ctxgraph_db::system::MemorySystem;
use ctxgraph_engine::{ChangeEvent, Engine};

use crate::agent_world::{World, counts};

const CWD: &str = "/repo/pkg/api";

fn world() -> World {
    let fs = Arc::new(MemorySystem::new());
    fs.write_file("/home/u/.codex/AGENTS.md", "global rules\n");
    fs.write_file("/home/u/.codex/config.toml", "project_doc_max_bytes = 4096\n");
    fs.init_git_repo("/repo");
    fs.write_file("/repo/AGENTS.md", "root rules\n");
    fs.write_file("/repo/pkg/api/AGENTS.md", "api rules\n");
    fs.write_file("/repo/pkg/api/src/lib.rs", "fn main() {}\n");
    World::new(fs, message)
}

fn message(engine: &mut Engine) -> String {
    let ws = engine.open(Path::new(CWD)).expect("cwd");
    // The query itself (the profile's answer runs more queries than the counts below name).
    let ctx = ctxgraph_agents::codex::agents_context(engine.db(), ws, None);
    ctx.as_ref().expect("codex").message.clone().unwrap_or_default()
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
    let (text, executed) = w.edit("/repo/pkg/api/AGENTS.md", "api rules, edited\n");
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
    let (text, executed) = w.edit("/home/u/.codex/config.toml", "project_doc_max_bytes = 4\n");
    assert!(text.contains("root\n</INSTRUCTIONS>"), "{text}");
    assert_eq!(
        executed,
        counts(&[("agents_context", 1), ("codex_config", 1), ("config_budget", 1), ("file_bytes", 1)])
    );
}

/// The budget is its own query over the parsed config, so a skills setting leaves it equal
/// and the `AGENTS.md` message is not reassembled.
#[test]
fn editing_only_the_skills_settings_leaves_the_message_alone() {
    let mut w = world();
    let (before, _) = w.build();
    let (after, executed) = w.edit(
        "/home/u/.codex/config.toml",
        "project_doc_max_bytes = 4096\n\n[skills]\ninclude_instructions = false\n",
    );
    assert_eq!(after, before);
    assert_eq!(executed, counts(&[("codex_config", 1), ("config_budget", 1), ("file_bytes", 1)]));
}

#[test]
fn an_unrelated_file_changes_nothing() {
    let mut w = world();
    let (before, _) = w.build();
    let (after, executed) = w.edit("/repo/pkg/api/src/lib.rs", "fn main() { edited() }\n");
    assert_eq!((after, executed), (before, counts(&[])));
}

fn skills_world() -> World {
    let fs = Arc::new(MemorySystem::new());
    fs.init_git_repo("/repo");
    fs.write_file("/repo/.codex/skills/deploy/SKILL.md", "---\ndescription: deploys\n---\nbody\n");
    fs.write_file("/repo/.agents/skills/lint/SKILL.md", "---\ndescription: lints\n---\n");
    fs.write_file("/repo/pkg/api/src/lib.rs", "fn main() {}\n");
    World::new(fs, skills_message)
}

fn skills_message(engine: &mut Engine) -> String {
    let ws = engine.open(Path::new(CWD)).expect("cwd");
    let skills = ctxgraph_agents::codex::skills::skills(engine.db(), ws);
    skills.message("INTRO", 272_000).map(|m| m.text).unwrap_or_default()
}

#[test]
fn editing_a_skill_rereads_that_file_only() {
    let mut w = skills_world();
    let (before, _) = w.build();
    assert!(before.contains("- deploy: deploys (file: r0/deploy/SKILL.md)"), "{before}");
    let (after, executed) =
        w.edit("/repo/.codex/skills/deploy/SKILL.md", "---\ndescription: ships it\n---\nbody\n");
    assert!(after.contains("- deploy: ships it"), "{after}");
    // Its real path is asked again (a skill met twice through links is one skill, CX7).
    assert_eq!(executed, counts(&[("file_bytes", 1), ("real_path_of", 1), ("skills", 1)]));
    let (again, executed) = w.edit("/repo/pkg/api/src/lib.rs", "fn main() { edited() }\n");
    assert_eq!((again, executed), (after, counts(&[])));
}
