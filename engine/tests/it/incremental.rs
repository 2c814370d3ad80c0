//! Incrementality: after each kind of file-system change, exactly the queries that looked at
//! what changed re-execute (counted through salsa's `WillExecute` events), and the result is
//! what a fresh engine computes from scratch. Runs on the in-memory file system.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use ctxgraph_db::system::MemorySystem;
use ctxgraph_engine::{ChangeEvent, Engine, HostEnv};

const CWD: &str = "/repo/pkg/api";

struct World {
    fs: Arc<MemorySystem>,
    engine: Engine,
}

fn host() -> HostEnv {
    HostEnv::fixed("/home/u")
}

/// A git worktree `/repo` with rules at the root and in `pkg/api`, and config
/// `instructions` with a plain, a `*` and a `**` pattern.
fn world() -> World {
    let fs = Arc::new(MemorySystem::new());
    fs.create_dir_all("/home/u/.config/opencode");
    fs.init_git_repo("/repo");
    fs.write_file("/repo/AGENTS.md", "root rules");
    fs.write_file("/repo/pkg/api/AGENTS.md", "api rules");
    fs.write_file("/repo/pkg/api/src/lib.rs", "fn main() {}");
    fs.write_file(
        "/repo/opencode.json",
        r#"{ "instructions": ["CONVENTIONS.md", "docs/*.md", "rules/**/*.md"] }"#,
    );
    fs.write_file("/repo/CONVENTIONS.md", "conventions");
    fs.write_file("/repo/docs/style.md", "style");
    fs.write_file("/repo/rules/team/review.md", "review");
    let engine = Engine::new(fs.clone(), host());
    World { fs, engine }
}

impl World {
    fn text(&mut self) -> String {
        let ws = self.engine.open(Path::new(CWD)).expect("cwd");
        self.engine.system_prompt(ws, None).expect("prompt").text()
    }

    /// Builds, and returns the text with the queries that executed for it.
    fn build(&mut self) -> (String, BTreeMap<String, u64>) {
        let before = self.engine.db().executions().totals();
        let text = self.text();
        let mut executed = self.engine.db().executions().totals();
        for (query, count) in &before {
            if let Some(now) = executed.get_mut(query) {
                *now -= count;
            }
        }
        executed.retain(|_, count| *count > 0);
        (text, executed)
    }

    fn apply(&mut self, changes: &[ChangeEvent]) {
        self.engine.apply_changes(changes);
    }

    /// What a fresh engine over the same file system builds.
    fn fresh_build(&self) -> String {
        let mut engine = Engine::new(self.fs.clone(), host());
        let ws = engine.open(Path::new(CWD)).expect("cwd");
        engine.system_prompt(ws, None).expect("prompt").text()
    }
}

fn counts(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs.iter().map(|(name, count)| ((*name).to_owned(), *count)).collect()
}

fn created(path: &str) -> ChangeEvent {
    ChangeEvent::Created(path.into())
}

fn modified(path: &str) -> ChangeEvent {
    ChangeEvent::Modified(path.into())
}

#[test]
fn no_change_executes_nothing() {
    let mut w = world();
    let (first, executed) = w.build();
    assert!(executed.contains_key("system_prompt"));
    w.apply(&[]);
    let (again, executed) = w.build();
    assert_eq!(again, first);
    assert_eq!(executed, counts(&[]));
}

#[test]
fn editing_a_rule_file_rereads_that_file_and_reassembles() {
    let mut w = world();
    w.build();
    w.fs.write_file("/repo/pkg/api/AGENTS.md", "api rules, edited");
    w.apply(&[modified("/repo/pkg/api/AGENTS.md")]);
    let (text, executed) = w.build();
    assert!(text.contains("api rules, edited"));
    assert_eq!(
        executed,
        counts(&[
            ("file_bytes", 1),
            ("file_text", 1),
            ("instruction_blocks", 1),
            ("rule_block", 1),
            ("system_prompt", 1)
        ])
    );
    assert_eq!(text, w.fresh_build());
}

#[test]
fn rewriting_the_same_bytes_stops_at_the_read() {
    let mut w = world();
    let (before, _) = w.build();
    w.fs.write_file("/repo/AGENTS.md", "root rules");
    w.apply(&[modified("/repo/AGENTS.md")]);
    let (after, executed) = w.build();
    assert_eq!(after, before);
    // Re-read, found equal, backdated: nothing that used the text runs again.
    assert_eq!(executed, counts(&[("file_bytes", 1)]));
}

#[test]
fn claude_md_beside_agents_md_changes_nothing() {
    let mut w = world();
    let (before, _) = w.build();
    // I4: AGENTS.md has hits between D and W, so CLAUDE.md is never looked at.
    w.fs.write_file("/repo/pkg/api/CLAUDE.md", "claude rules");
    w.apply(&[created("/repo/pkg/api/CLAUDE.md")]);
    let (after, executed) = w.build();
    assert_eq!(after, before);
    assert!(!executed.contains_key("system_prompt"), "{executed:?}");
    assert!(!executed.contains_key("system_paths"), "{executed:?}");
}

#[test]
fn agents_md_in_an_ancestor_reruns_that_walk_and_the_assembly() {
    let mut w = world();
    w.build();
    w.fs.write_file("/repo/pkg/AGENTS.md", "pkg rules");
    w.apply(&[created("/repo/pkg/AGENTS.md")]);
    let (text, executed) = w.build();
    assert!(text.contains("Instructions from: /repo/pkg/AGENTS.md\npkg rules"));
    // The AGENTS.md walk (`find_up` over `up`) re-runs; the config walks, the globs and
    // the other rule files do not.
    assert_eq!(
        executed,
        counts(&[
            ("file_bytes", 1),
            ("file_text", 1),
            ("find_up", 1),
            ("instruction_blocks", 1),
            ("rule_block", 1),
            ("system_paths", 1),
            ("system_prompt", 1),
            ("up", 1),
        ])
    );
    assert_eq!(text, w.fresh_build());
}

#[test]
fn a_file_matching_a_star_glob_reruns_that_glob() {
    let mut w = world();
    w.build();
    w.fs.write_file("/repo/docs/testing.md", "testing");
    w.apply(&[created("/repo/docs/testing.md")]);
    let (text, executed) = w.build();
    assert!(text.contains("Instructions from: /repo/docs/testing.md\ntesting"));
    // Only the `docs/*.md` glob at `/repo` listed `/repo/docs`.
    assert_eq!(
        executed,
        counts(&[
            ("dir_listing", 1),
            ("file_bytes", 1),
            ("file_text", 1),
            ("glob", 1),
            ("instruction_blocks", 1),
            ("rule_block", 1),
            ("system_paths", 1),
            ("system_prompt", 1),
        ])
    );
    assert_eq!(text, w.fresh_build());
}

#[test]
fn a_new_directory_under_a_globstar_is_walked() {
    let mut w = world();
    w.build();
    w.fs.write_file("/repo/rules/ops/deploy/steps.md", "steps");
    // A watcher reports the first new directory; what is inside is found by listing it.
    w.apply(&[created("/repo/rules/ops")]);
    let (text, executed) = w.build();
    assert!(text.contains("Instructions from: /repo/rules/ops/deploy/steps.md\nsteps"));
    assert_eq!(executed.get("glob"), Some(&1), "{executed:?}");
    assert_eq!(text, w.fresh_build());
}

#[test]
fn removing_a_directory_drops_what_was_below_it() {
    let mut w = world();
    w.build();
    w.fs.remove("/repo/docs");
    w.apply(&[ChangeEvent::Removed("/repo/docs".into())]);
    let (text, _) = w.build();
    assert!(!text.contains("/repo/docs/style.md"));
    assert_eq!(text, w.fresh_build());
}

#[test]
fn renaming_a_rule_file_moves_its_block() {
    let mut w = world();
    w.build();
    w.fs.remove("/repo/pkg/api/AGENTS.md");
    w.fs.write_file("/repo/pkg/AGENTS.md", "api rules");
    w.apply(&[ChangeEvent::Renamed {
        from: "/repo/pkg/api/AGENTS.md".into(),
        to: "/repo/pkg/AGENTS.md".into(),
    }]);
    let (text, _) = w.build();
    assert!(text.contains("Instructions from: /repo/pkg/AGENTS.md"));
    assert!(!text.contains("Instructions from: /repo/pkg/api/AGENTS.md"));
    assert_eq!(text, w.fresh_build());
}

#[test]
fn a_rescan_catches_changes_nobody_reported() {
    let mut w = world();
    w.build();
    w.fs.write_file("/repo/AGENTS.md", "root rules, silently edited");
    w.fs.write_file("/repo/docs/silent.md", "silent");
    w.fs.remove("/repo/CONVENTIONS.md");
    w.apply(&[ChangeEvent::Rescan]);
    let (text, executed) = w.build();
    assert!(text.contains("silently edited") && text.contains("silent"));
    assert_eq!(text, w.fresh_build());
    // Unchanged files were re-read and backdated: the environment block did not re-run.
    assert!(!executed.contains_key("environment_block"), "{executed:?}");
}

#[test]
fn editing_the_config_reparses_that_layer() {
    let mut w = world();
    w.build();
    w.fs.write_file("/repo/opencode.json", r#"{ "instructions": ["CONVENTIONS.md"] }"#);
    w.apply(&[modified("/repo/opencode.json")]);
    let (text, executed) = w.build();
    assert!(!text.contains("/repo/docs/style.md"));
    assert_eq!(executed.get("config_layer"), Some(&1), "{executed:?}");
    assert!(!executed.contains_key("config_sources"), "{executed:?}");
    assert_eq!(text, w.fresh_build());
}

/// A sequence of edits, each applied as the events a watcher would report; after every
/// step the warm engine agrees with a fresh one.
#[test]
fn incremental_equals_fresh_build_through_a_sequence_of_edits() {
    type Step = fn(&MemorySystem) -> Vec<ChangeEvent>;
    let mut w = world();
    w.build();
    let steps: &[Step] = &[
        |fs| {
            fs.write_file("/repo/pkg/CLAUDE.md", "pkg claude");
            vec![created("/repo/pkg/CLAUDE.md")]
        },
        |fs| {
            fs.remove("/repo/pkg/api/AGENTS.md");
            fs.remove("/repo/AGENTS.md");
            vec![
                ChangeEvent::Removed("/repo/pkg/api/AGENTS.md".into()),
                ChangeEvent::Removed("/repo/AGENTS.md".into()),
            ]
        },
        |fs| {
            fs.write_file("/repo/pkg/api/docs/local.md", "local docs");
            vec![created("/repo/pkg/api/docs")]
        },
        |fs| {
            fs.write_file("/repo/pkg/api/opencode.json", r#"{ "instructions": ["extra.md"] }"#);
            fs.write_file("/repo/pkg/api/extra.md", "extra");
            vec![created("/repo/pkg/api/opencode.json"), created("/repo/pkg/api/extra.md")]
        },
        |fs| {
            fs.write_file("/home/u/.config/opencode/AGENTS.md", "global");
            vec![created("/home/u/.config/opencode/AGENTS.md")]
        },
        |fs| {
            fs.write_file("/repo/pkg/api/extra.md", "");
            vec![modified("/repo/pkg/api/extra.md")]
        },
        |fs| {
            fs.remove("/repo/.git");
            vec![ChangeEvent::Removed("/repo/.git".into())]
        },
    ];
    for (index, step) in steps.iter().enumerate() {
        let changes = step(&w.fs);
        w.apply(&changes);
        let (text, _) = w.build();
        assert_eq!(text, w.fresh_build(), "after step {index}");
    }
}

#[test]
fn nearby_sees_a_rule_file_created_next_to_the_read() {
    let mut w = world();
    let ws = w.engine.open(Path::new(CWD)).expect("cwd");
    let target = Path::new("/repo/pkg/api/src/lib.rs");
    assert_eq!(w.engine.nearby(ws, target).expect("nearby").reminder(), None);
    w.fs.write_file("/repo/pkg/api/src/AGENTS.md", "src rules");
    w.apply(&[created("/repo/pkg/api/src/AGENTS.md")]);
    let reminder = w.engine.nearby(ws, target).expect("nearby").reminder().expect("a reminder");
    assert!(reminder.contains("Instructions from: /repo/pkg/api/src/AGENTS.md\nsrc rules"));
}

/// A clock the test moves forward.
struct TestClock(std::sync::Mutex<String>);

impl ctxgraph_engine::Clock for TestClock {
    fn today(&self) -> String {
        self.0.lock().expect("clock").clone()
    }
}

#[test]
fn the_date_follows_the_engines_clock_from_one_build_to_the_next() {
    let clock = Arc::new(TestClock(std::sync::Mutex::new("Sun Nov 29 2026".to_owned())));
    let mut w = world();
    w.engine = Engine::new(w.fs.clone(), host()).with_clock(clock.clone());
    let (before, _) = w.build();
    assert!(before.contains("Today's date: Sun Nov 29 2026"));
    let (_, executed) = w.build();
    assert_eq!(executed, counts(&[]), "the same day: nothing re-runs");

    *clock.0.lock().expect("clock") = "Mon Nov 30 2026".to_owned();
    let (after, executed) = w.build();
    assert_eq!(after, before.replace("Sun Nov 29 2026", "Mon Nov 30 2026"));
    // Only the environment block and the assembly that contains it.
    assert_eq!(executed, counts(&[("environment_block", 1), ("system_prompt", 1)]));
}

#[test]
fn without_a_clock_the_date_is_the_one_the_engine_was_made_with() {
    let mut w = world();
    let (text, _) = w.build();
    assert!(text.contains("Today's date: Sun Nov 29 2026"));
    assert!(!w.engine.sync_date());
}

/// `/repo` with `instructions: ["**/*.md"]`, 24 sibling packages with a rule file each, and
/// two working directories three levels down: every `globUp` level walks the tree below it.
fn globstar_world() -> World {
    let fs = Arc::new(MemorySystem::new());
    fs.create_dir_all("/home/u/.config/opencode");
    fs.init_git_repo("/repo");
    fs.write_file("/repo/opencode.json", r#"{ "instructions": ["**/*.md"] }"#);
    for index in 0..24 {
        fs.write_file(format!("/repo/pkg/p{index:02}/docs/rules.md"), format!("rules {index}"));
    }
    fs.create_dir_all("/repo/pkg/api/src");
    fs.create_dir_all("/repo/pkg/web/src");
    let engine = Engine::new(fs.clone(), host());
    World { fs, engine }
}

#[test]
fn a_file_deep_under_a_globstar_reruns_only_the_walks_on_its_path() {
    let mut w = globstar_world();
    let (_, cold) = w.build();
    // One `**` walk per directory below the worktree, shared by the three `globUp` levels
    // that reach it: /repo, pkg, api, api/src, web, web/src, 24 packages and their docs,
    // and (`globUp` sets `dot`) .git, .git/objects, .git/refs.
    assert_eq!(cold.get("glob_below"), Some(&(6 + 24 + 24 + 3)), "{cold:?}");

    w.fs.write_file("/repo/pkg/p07/docs/more.md", "more");
    w.apply(&[created("/repo/pkg/p07/docs/more.md")]);
    let (text, executed) = w.build();
    assert!(text.contains("Instructions from: /repo/pkg/p07/docs/more.md\nmore"));
    // The walks on its path, each holding its subtree's matches: docs (which found it),
    // p07, pkg and /repo; their siblings' walks are reused. Then the two `globUp` levels
    // above it, each reading one walk's list.
    assert_eq!(executed.get("glob_below"), Some(&4), "{executed:?}");
    assert_eq!(executed.get("glob"), Some(&2), "{executed:?}");
    assert_eq!(executed.get("dir_listing"), Some(&1), "{executed:?}");
    assert_eq!(text, w.fresh_build());
}

#[test]
fn a_new_working_directory_reuses_the_walks_it_shares() {
    let mut w = globstar_world();
    w.build();
    let before = w.engine.db().executions().totals();
    let ws = w.engine.open(Path::new("/repo/pkg/web/src")).expect("cwd");
    let text = w.engine.system_prompt(ws, None).expect("prompt").text();
    let after = w.engine.db().executions().totals();
    let ran = |query: &str| after.get(query).copied().unwrap_or(0) - before.get(query).copied().unwrap_or(0);
    assert!(text.contains("Instructions from: /repo/pkg/p23/docs/rules.md"));
    // Every directory below /repo/pkg/web/src was walked for /repo/pkg/api/src already.
    assert_eq!(ran("glob_below"), 0);
    assert_eq!(ran("dir_listing"), 0);
    // The two levels not shared with the first cwd: web/src and web.
    assert_eq!(ran("glob"), 2);
}

/// The in-memory file system, counting `stat`s (`kind` calls) per path.
#[derive(Debug)]
struct CountingStats {
    fs: Arc<MemorySystem>,
    stats: std::sync::Mutex<Vec<std::path::PathBuf>>,
}

impl ctxgraph_db::system::System for CountingStats {
    fn kind(&self, path: &Path) -> ctxgraph_db::system::FileKind {
        self.stats.lock().expect("stats").push(path.to_path_buf());
        self.fs.kind(path)
    }
    fn read(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        self.fs.read(path)
    }
    fn read_dir(&self, path: &Path) -> std::io::Result<Vec<ctxgraph_db::system::DirEntry>> {
        self.fs.read_dir(path)
    }
    fn canonicalize(&self, path: &Path) -> std::io::Result<std::path::PathBuf> {
        self.fs.canonicalize(path)
    }
}

#[test]
fn a_cold_build_stats_each_path_at_most_once_and_listed_entries_not_at_all() {
    let w = globstar_world();
    let counting = Arc::new(CountingStats { fs: w.fs.clone(), stats: std::sync::Mutex::default() });
    let mut engine = Engine::new(counting.clone(), host());
    let ws = engine.open(Path::new(CWD)).expect("cwd");
    let text = engine.system_prompt(ws, None).expect("prompt").text();
    assert!(text.contains("Instructions from: /repo/pkg/p23/docs/rules.md"));
    let stats = counting.stats.lock().expect("stats");
    let mut seen = std::collections::BTreeSet::new();
    for path in stats.iter() {
        assert!(seen.insert(path), "{} was stat'ed twice", path.display());
    }
    // The packages, their docs directories and the rule files in them were only ever
    // seen in listings: the listing said what they are.
    let below_packages: Vec<_> = stats.iter().filter(|p| p.starts_with("/repo/pkg/p07")).collect();
    assert_eq!(below_packages, Vec::<&std::path::PathBuf>::new());
}

/// The whole message: editing a rule re-executes the rule's stages and the assembly, never
/// the agents (nor anything of opencode's texts); setting the installation re-executes only
/// the assembly (which reads it), and setting an equal one nothing.
#[test]
fn the_message_recomputes_only_what_an_edit_or_the_installation_touches() {
    use ctxgraph_db::installation::{InstallationState, Texts};
    use ctxgraph_opencode::message::MessageOptions;
    use ctxgraph_opencode::prompt::Section;

    let mut w = world();
    let ws = w.engine.open(Path::new(CWD)).expect("cwd");
    let options =
        MessageOptions { model: Some("a/claude-x".parse().expect("model")), ..MessageOptions::default() };
    let build = |w: &mut World| {
        let before = w.engine.db().executions().totals();
        let text =
            w.engine.system_message(ws, options.clone()).expect("message").layout(Section::Message).text;
        let mut executed = w.engine.db().executions().totals();
        for (query, count) in &before {
            if let Some(now) = executed.get_mut(query) {
                *now -= count;
            }
        }
        executed.retain(|_, count| *count > 0);
        (text, executed)
    };
    let (first, executed) = build(&mut w);
    assert!(executed.contains_key("agents") && first.contains("unavailable"), "{executed:?}");

    w.fs.write_file("/repo/pkg/api/AGENTS.md", "api rules, edited");
    w.apply(&[modified("/repo/pkg/api/AGENTS.md")]);
    let (_, executed) = build(&mut w);
    assert_eq!(
        executed,
        counts(&[
            ("file_bytes", 1),
            ("file_text", 1),
            ("instruction_blocks", 1),
            ("rule_block", 1),
            ("system_message", 1),
            ("system_prompt", 1)
        ])
    );

    let texts = [("model/anthropic".to_owned(), Arc::from("OUR STAND-IN\n"))].into_iter().collect();
    let state =
        InstallationState::Found(Arc::new(Texts { binary: "/x".into(), version: "1.18.33".into(), texts }));
    w.engine.set_installation(state.clone());
    let (text, executed) = build(&mut w);
    assert!(text.starts_with("OUR STAND-IN\n\n"), "{text}");
    // The skills block holds the built-in skill's description, also one of opencode's texts.
    assert_eq!(executed, counts(&[("skills_block", 1), ("system_message", 1)]));
    w.engine.set_installation(state);
    assert_eq!(build(&mut w).1, counts(&[]));
}

/// Every agent's turns ([`AgentTurns`]): a turn with no input set since the last one is that
/// build again (the same layout, nothing laid out, compared or executed); after an input is
/// set that the text does not read, the same build comes back, compared; an edit of a file
/// the text carries is the block that changed.
#[test]
fn an_agents_unchanged_turn_is_its_last_build() {
    use ctxgraph_engine::answers::profile::Request;
    use ctxgraph_engine::{Agent, AgentTurns};

    let mut w = world();
    w.fs.write_file("/repo/CLAUDE.md", "claude rules");
    for agent in [Agent::Opencode, Agent::Codex, Agent::ClaudeCode] {
        let mut turns = AgentTurns::default();
        let request = Request::default();
        let ws = w.engine.open(Path::new(CWD)).expect("cwd");
        let first = turns.build(&w.engine, ws, agent, &request).expect("build");
        assert!(!first.diff.added.is_empty(), "{agent}: {:?}", first.diff);
        let again = turns.build(&w.engine, ws, agent, &request).expect("build");
        assert!(Arc::ptr_eq(&first.layout, &again.layout) && again.diff.is_empty(), "{agent}");
        assert_eq!(again.executed, 0, "{agent}");

        // An input the text does not read: the revision moves, the build is compared.
        w.fs.write_file("/repo/pkg/api/src/lib.rs", format!("fn main() {{}} // {agent}"));
        w.apply(&[modified("/repo/pkg/api/src/lib.rs")]);
        let ws = w.engine.open(Path::new(CWD)).expect("cwd");
        let compared = turns.build(&w.engine, ws, agent, &request).expect("build");
        assert!(Arc::ptr_eq(&first.layout, &compared.layout) && compared.diff.is_empty(), "{agent}");

        // A file the text carries.
        let rules = if agent == Agent::ClaudeCode { "/repo/CLAUDE.md" } else { "/repo/AGENTS.md" };
        w.fs.write_file(rules, format!("{agent}'s rules, edited"));
        w.apply(&[modified(rules)]);
        let ws = w.engine.open(Path::new(CWD)).expect("cwd");
        let edited = turns.build(&w.engine, ws, agent, &request).expect("build");
        assert_eq!(edited.diff.modified, [Arc::from(format!("file:{rules}"))], "{agent}: {:?}", edited.diff);
        assert!(edited.layout.text.contains("rules, edited"), "{agent}");
    }
}

/// Claude Code's settings files are parsed once for every key read from them
/// (`claudeMdExcludes`, `outputStyle`, `disabledMcpjsonServers`): after an edit to one,
/// `claude_settings` runs once however many readers consume it, and an edit elsewhere
/// leaves it alone.
#[test]
fn claude_codes_settings_are_parsed_once_per_edit() {
    use ctxgraph_engine::Agent;
    use ctxgraph_engine::answers::profile::{Request, Section};

    let mut w = world();
    w.fs.write_file("/repo/CLAUDE.md", "claude rules");
    w.fs.write_file("/repo/pkg/api/.claude/settings.json", r#"{ "claudeMdExcludes": ["**/nothing/**"] }"#);
    let request = Request { section: Section::Request, ..Request::default() };
    let run = |w: &mut World| {
        let before = w.engine.db().executions().totals();
        let ws = w.engine.open(Path::new(CWD)).expect("cwd");
        // The whole request reads all three keys (excludes, output style, MCP servers).
        let layout = w.engine.agent_layout(ws, Agent::ClaudeCode, &request).expect("layout");
        let report = w.engine.settings_report(ws, Agent::ClaudeCode).expect("settings");
        let after = w.engine.db().executions().totals();
        let ran = after.get("claude_settings").copied().unwrap_or(0)
            - before.get("claude_settings").copied().unwrap_or(0);
        (layout, report, ran)
    };
    let (_, report, ran) = run(&mut w);
    assert_eq!(ran, 1, "parsed once for the whole request and the settings report");
    assert_eq!(report.masked["claudeMdExcludes"], serde_json::json!(["**/nothing/**"]));

    w.fs.write_file("/repo/pkg/api/src/lib.rs", "fn main() { /* edited */ }");
    w.apply(&[modified("/repo/pkg/api/src/lib.rs")]);
    let (_, _, ran) = run(&mut w);
    assert_eq!(ran, 0, "an edit to another file leaves the settings parsed");

    w.fs.write_file(
        "/repo/pkg/api/.claude/settings.json",
        r#"{ "claudeMdExcludes": ["**/nothing/**"], "outputStyle": "Learning" }"#,
    );
    w.apply(&[modified("/repo/pkg/api/.claude/settings.json")]);
    let (_, report, ran) = run(&mut w);
    assert_eq!(ran, 1, "one parse for every reader after the edit");
    assert_eq!(report.masked["outputStyle"], "Learning");
}
