//! Incrementality of the Claude Code profile: a change re-executes only the queries that
//! looked at it, and the block (and a Read's attachment) equals what a fresh engine builds.

use std::path::Path;
use std::sync::Arc;

use ctxgraph_agents::claude_code::{Prose, claude_md_context, read_attachment};
use ctxgraph_db::system::MemorySystem;
use ctxgraph_engine::{ChangeEvent, Engine};

use crate::agent_world::{World, counts};

const CWD: &str = "/repo/pkg";
const READ: &str = "/repo/pkg/api/handler.ts";

fn world() -> World {
    let fs = Arc::new(MemorySystem::new());
    fs.write_file("/home/u/.claude/CLAUDE.md", "user rules\n");
    fs.init_git_repo("/repo");
    fs.write_file("/repo/CLAUDE.md", "root rules @shared/notes.md\n");
    fs.write_file("/repo/shared/notes.md", "shared notes\n");
    fs.write_file("/repo/pkg/CLAUDE.md", "pkg rules\n");
    fs.write_file("/repo/pkg/.claude/rules/ts.md", "---\npaths: \"**/*.ts\"\n---\nts rule\n");
    fs.write_file("/repo/pkg/api/CLAUDE.md", "api rules\n");
    fs.write_file(READ, "export {}\n");
    World::new(fs, built)
}

/// The block and the Read's attachment, as one string.
fn built(engine: &mut Engine) -> String {
    let ws = engine.open(Path::new(CWD)).expect("cwd");
    // The queries themselves (the profile's answers run more queries than the counts name).
    let block = claude_md_context(engine.db(), ws).reminder(&Prose::fingerprints()).unwrap_or_default();
    let read = read_attachment(engine.db(), ws, READ.into()).text(&Prose::fingerprints().request);
    format!("{block}\n--- read\n{read}")
}

#[test]
fn nothing_changed_executes_nothing() {
    let mut w = world();
    let (first, executed) = w.build();
    assert!(first.contains("pkg rules") && first.contains("ts rule"), "{first}");
    assert!(
        executed.contains_key("claude_md_context") && executed.contains_key("read_attachment"),
        "{executed:?}"
    );
    let (again, executed) = w.build();
    assert_eq!((again, executed), (first, counts(&[])));
}

#[test]
fn editing_a_rule_file_rereads_it_and_reassembles() {
    let mut w = world();
    w.build();
    let (text, executed) = w.edit("/repo/pkg/CLAUDE.md", "pkg rules, edited\n");
    assert!(text.contains("pkg rules, edited"), "{text}");
    // The Read's attachment looks at the session's files, so it re-runs; nothing else.
    assert_eq!(executed, counts(&[("claude_md_context", 1), ("file_bytes", 1), ("read_attachment", 1)]));
}

#[test]
fn editing_a_nested_file_only_touches_the_read() {
    let mut w = world();
    let (before, _) = w.build();
    let (text, executed) = w.edit("/repo/pkg/api/CLAUDE.md", "api rules, edited\n");
    assert!(text.contains("api rules, edited"), "{text}");
    assert_eq!(text.split("--- read").next(), before.split("--- read").next(), "the block is unchanged");
    assert_eq!(executed, counts(&[("file_bytes", 1), ("read_attachment", 1)]));
}

#[test]
fn approving_external_imports_rereads_the_approval() {
    let mut w = world();
    let (before, _) = w.build();
    assert!(!before.contains("shared notes"), "{before}");
    w.fs.write_file(
        "/home/u/.claude.json",
        r#"{"projects": {"/repo": {"hasClaudeMdExternalIncludesApproved": true}}}"#,
    );
    let (text, executed) = w.change(ChangeEvent::Created("/home/u/.claude.json".into()));
    assert!(text.contains("shared notes"), "{text}");
    assert_eq!(executed.get("approval"), Some(&1), "{executed:?}");
    assert!(!executed.contains_key("worktree"), "{executed:?}");
}

#[test]
fn an_unrelated_file_changes_nothing() {
    let mut w = world();
    let (before, _) = w.build();
    w.fs.write_file(READ, "export const edited = 1;\n");
    let (after, executed) = w.change(ChangeEvent::Modified(READ.into()));
    assert_eq!((after, executed), (before, counts(&[])));
}

/// A 200-file rules folder that lists newest first (tmpfs): a new file takes the first place
/// in the block, and the warm turn lists that folder again and nothing else.
#[test]
fn a_new_rule_file_relists_only_its_folder_and_takes_its_listed_place() {
    fn block(engine: &mut Engine) -> String {
        let ws = engine.open(Path::new(CWD)).expect("cwd");
        claude_md_context(engine.db(), ws).reminder(&Prose::fingerprints()).unwrap_or_default()
    }
    let fs = Arc::new(MemorySystem::new());
    fs.init_git_repo("/repo");
    for i in 0..200 {
        fs.write_file(format!("/repo/pkg/.claude/rules/r{i:03}.md"), format!("rule {i}\n"));
    }
    let mut w = World::new(fs, block);
    let (first, _) = w.build();
    assert!(first.find("rule 199").unwrap() < first.find("rule 0\n").unwrap(), "newest first");
    w.fs.write_file("/repo/pkg/.claude/rules/a-new.md", "the new rule\n");
    let (text, executed) = w.change(ChangeEvent::Created("/repo/pkg/.claude/rules/a-new.md".into()));
    assert!(text.find("the new rule").unwrap() < text.find("rule 199").unwrap(), "listed first: {text}");
    assert_eq!(executed.get("dir_listing"), Some(&1), "{executed:?}");
    assert_eq!(executed.get("file_bytes"), Some(&1), "{executed:?}");
}

/// Two disks that list one rules folder in different orders: Claude Code's text differs,
/// every block of the folder is marked `listed`, and the text with each listed run in one
/// order (what `check` pins) is the same.
#[test]
fn two_listing_orders_differ_as_text_and_agree_as_sets() {
    use ctxgraph_db::profile::{ListedOrder, Request};
    use ctxgraph_db::system::ListingOrder;
    let layout = |order: ListingOrder| {
        let fs = Arc::new(MemorySystem::new());
        fs.init_git_repo("/repo");
        fs.write_file("/repo/CLAUDE.md", "root\n");
        for name in ["b", "c", "a"] {
            fs.write_file(format!("/repo/.claude/rules/{name}.md"), format!("rule {name}\n"));
        }
        fs.set_listing_order(order);
        let mut engine = Engine::new(fs, crate::agent_world::host());
        let ws = engine.open(Path::new("/repo")).expect("cwd");
        engine.agent_layout(ws, ctxgraph_db::agent::Agent::ClaudeCode, &Request::default()).expect("layout")
    };
    let (newest, by_name) = (layout(ListingOrder::NewestFirst), layout(ListingOrder::ByName));
    assert_ne!(newest.text, by_name.text);
    let listed: Vec<_> = newest.blocks.iter().filter_map(|b| b.listed.as_ref()).collect();
    assert_eq!(listed.len(), 3, "{:?}", newest.blocks);
    assert!(
        listed.iter().all(|l| l.order == ListedOrder::AsListed && l.dir == Path::new("/repo/.claude/rules"))
    );
    assert_eq!(newest.sets_in_one_order().0, by_name.sets_in_one_order().0);
}

/// `session rules` reads its transcript as a file input: asking again executes nothing, an
/// appended transcript re-reads only the transcript, and a rule file's edit leaves the
/// transcript's query alone.
#[test]
fn a_transcript_is_an_input_like_any_file() {
    const TRANSCRIPT: &str = "/repo/pkg/session.jsonl";
    fn built(engine: &mut Engine) -> String {
        let ws = engine.open(Path::new(CWD)).expect("cwd");
        let costs = engine
            .session_costs(ws, ctxgraph_engine::Agent::ClaudeCode, Path::new(TRANSCRIPT))
            .expect("session rules");
        let block = claude_md_context(engine.db(), ws).reminder(&Prose::fingerprints()).unwrap_or_default();
        format!("{}\n{block}", costs.steps.len())
    }
    let recorded = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/agents/claude-code/sessions/parallel-nested/transcript.jsonl"),
    )
    .expect("a recorded transcript");
    let lines: Vec<&str> = recorded.lines().collect();
    let mut w = world();
    w.text = built;
    w.fs.write_file(TRANSCRIPT, lines[..lines.len() - 4].join("\n"));
    let (first, executed) = w.build();
    assert!(executed.contains_key("transcript_occurrences"), "{executed:?}");
    assert_eq!(w.build().1, counts(&[]), "nothing changed");
    let (grown, executed) = w.edit(TRANSCRIPT, &recorded);
    assert_ne!(grown, first);
    assert_eq!(executed, counts(&[("file_bytes", 1), ("transcript_occurrences", 1)]));
    let (_, executed) = w.edit("/repo/pkg/CLAUDE.md", "pkg rules, edited\n");
    assert!(!executed.contains_key("transcript_occurrences"), "{executed:?}");
}
