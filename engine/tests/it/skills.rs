//! Skills (B5) incrementality: adding or editing a SKILL.md re-executes the walk step of its
//! directory, its own parse and the registry, nothing else (counted through salsa's
//! `WillExecute` events), and the result equals a fresh engine's.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use ctxgraph_db::system::MemorySystem;
use ctxgraph_engine::{ChangeEvent, Engine, HostEnv};
use ctxgraph_opencode::skills::{render, skills};

const CWD: &str = "/repo/pkg";
/// Stand-ins for opencode's sentences and the built-in skill's description, which the
/// installation supplies.
const PROSE: render::Prose<'static> = render::Prose {
    intro: "(intro)",
    how_to_load: "(how to load)",
    none_available: "(none available)",
    builtin_description: "(built-in description)",
};

fn host() -> HostEnv {
    HostEnv::fixed("/home/u")
}

struct World {
    fs: Arc<MemorySystem>,
    engine: Engine,
}

fn skill(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\nBody of {name}.\n")
}

/// A worktree `/repo` with skills in `~/.claude`, the project's `.claude` and `.opencode`.
fn world() -> World {
    let fs = Arc::new(MemorySystem::new());
    fs.create_dir_all("/home/u/.config/opencode");
    fs.init_git_repo("/repo");
    fs.create_dir_all("/repo/pkg");
    fs.write_file("/home/u/.claude/skills/home/SKILL.md", skill("home", "from home"));
    fs.write_file("/repo/.claude/skills/review/SKILL.md", skill("review", "reviews code"));
    fs.write_file("/repo/.opencode/skills/deploy/SKILL.md", skill("deploy", "deploys"));
    let engine = Engine::new(fs.clone(), host());
    World { fs, engine }
}

fn block(engine: &mut Engine) -> String {
    let ws = engine.open(Path::new(CWD)).expect("cwd");
    let skills = skills(engine.db(), ws).as_ref().expect("skills");
    render::block_text(&PROSE, &render::listed(skills, PROSE.builtin_description, |_| true))
}

impl World {
    fn build(&mut self) -> (String, BTreeMap<String, u64>) {
        let before = self.engine.db().executions().totals();
        let text = block(&mut self.engine);
        let mut executed = self.engine.db().executions().totals();
        for (query, count) in &before {
            if let Some(now) = executed.get_mut(query) {
                *now -= count;
            }
        }
        executed.retain(|_, count| *count > 0);
        (text, executed)
    }

    fn fresh_build(&self) -> String {
        block(&mut Engine::new(self.fs.clone(), host()))
    }
}

fn counts(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs.iter().map(|(name, count)| ((*name).to_owned(), *count)).collect()
}

#[test]
fn no_change_executes_nothing() {
    let mut w = world();
    let (first, executed) = w.build();
    assert!(executed.contains_key("skills"), "{executed:?}");
    assert!(first.contains("<name>review</name>"));
    w.engine.apply_changes(&[]);
    let (again, executed) = w.build();
    assert_eq!(again, first);
    assert_eq!(executed, counts(&[]));
}

#[test]
fn a_new_skill_walks_its_directory_and_parses_one_file() {
    let mut w = world();
    w.build();
    w.fs.write_file("/repo/.claude/skills/lint/SKILL.md", skill("lint", "lints"));
    // A watcher reports the new directory; its SKILL.md is found by listing it.
    w.engine.apply_changes(&[ChangeEvent::Created("/repo/.claude/skills/lint".into())]);
    let (text, executed) = w.build();
    assert!(text.contains("<name>lint</name>\n    <description>lints</description>"), "{text}");
    assert_eq!(
        executed,
        counts(&[
            ("dir_listing", 2),
            ("file_bytes", 1),
            ("file_text", 1),
            ("skill_file", 1),
            ("skills", 1),
            ("skills_below", 2),
        ])
    );
    assert_eq!(text, w.fresh_build());
}

#[test]
fn editing_a_description_reparses_that_file_only() {
    let mut w = world();
    w.build();
    w.fs.write_file("/repo/.opencode/skills/deploy/SKILL.md", skill("deploy", "ships it"));
    w.engine.apply_changes(&[ChangeEvent::Modified("/repo/.opencode/skills/deploy/SKILL.md".into())]);
    let (text, executed) = w.build();
    assert!(text.contains("<description>ships it</description>"), "{text}");
    assert_eq!(executed, counts(&[("file_bytes", 1), ("file_text", 1), ("skill_file", 1), ("skills", 1)]));
    assert_eq!(text, w.fresh_build());
}

#[test]
fn editing_a_skill_body_stops_at_its_parse() {
    let mut w = world();
    let (before, _) = w.build();
    // The body is not part of the listing: the parse re-runs, finds the same name and
    // description, and nothing after it does.
    w.fs.write_file(
        "/repo/.claude/skills/review/SKILL.md",
        "---\nname: review\ndescription: reviews code\n---\nNew body.\n",
    );
    w.engine.apply_changes(&[ChangeEvent::Modified("/repo/.claude/skills/review/SKILL.md".into())]);
    let (after, executed) = w.build();
    assert_eq!(after, before);
    assert_eq!(executed, counts(&[("file_bytes", 1), ("file_text", 1), ("skill_file", 1)]));
}

#[test]
fn a_skills_path_in_the_config_adds_one_root() {
    let mut w = world();
    w.build();
    w.fs.write_file("/repo/pkg/extra/tool/SKILL.md", skill("tool", "from skills.paths"));
    w.fs.write_file("/repo/pkg/opencode.json", r#"{ "skills": { "paths": ["extra"] } }"#);
    w.engine.apply_changes(&[
        ChangeEvent::Created("/repo/pkg/extra".into()),
        ChangeEvent::Created("/repo/pkg/opencode.json".into()),
    ]);
    let (text, executed) = w.build();
    assert!(text.contains("<location>/repo/pkg/extra/tool/SKILL.md</location>"), "{text}");
    // The unchanged roots' walks and files are not redone.
    assert_eq!(executed.get("skill_file"), Some(&1), "{executed:?}");
    assert_eq!(text, w.fresh_build());
}

#[test]
fn explain_names_every_skill_and_refuses_an_unknown_agent() {
    let mut w = world();
    let ws = w.engine.open(Path::new(CWD)).expect("cwd");
    let explanation = w.engine.explain_skills(ws, "build").expect("explain");
    let listed: Vec<_> =
        explanation.items.iter().filter(|i| i.listed).filter_map(|i| i.name.clone()).collect();
    assert_eq!(listed, ["customize-opencode", "deploy", "home", "review"]);
    let err = w.engine.explain_skills(ws, "nobody").expect_err("no such agent");
    assert!(err.to_string().contains("\"nobody\""), "{err}");
}
