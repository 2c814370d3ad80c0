//! The real watcher on a temporary directory: edits made on disk reach the next build.
//! Every wait is bounded.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ctxgraph_engine::watch::Watcher;
use ctxgraph_engine::{Engine, HostEnv, OsSystem};

const DEADLINE: Duration = Duration::from_secs(10);

struct Live {
    _dir: tempfile::TempDir,
    root: PathBuf,
    engine: Engine,
    watcher: Watcher,
}

impl Live {
    /// `repo/` (a git worktree, `instructions: ["rules/**/*.md"]`) with a root `AGENTS.md`;
    /// the working directory is `repo/pkg/api`. Built once and watched.
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = std::fs::canonicalize(dir.path()).expect("canonical");
        let write = |relative: &str, content: &str| {
            let path = root.join(relative);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, content).expect("write");
        };
        write("repo/.git/HEAD", "ref: refs/heads/main\n");
        write("repo/.git/objects/.keep", "");
        write("repo/.git/refs/.keep", "");
        write("repo/AGENTS.md", "root rules");
        write("repo/opencode.json", r#"{ "instructions": ["rules/**/*.md"] }"#);
        write("repo/rules/base.md", "base");
        std::fs::create_dir_all(root.join("repo/pkg/api")).expect("cwd");
        std::fs::create_dir_all(root.join("home/.config/opencode")).expect("home");
        let home = root.join("home");
        let env = HostEnv {
            vars: BTreeMap::from([("HOME".to_owned(), home.display().to_string())]),
            home,
            platform: "linux".to_owned(),
            date: "Sun Nov 29 2026".to_owned(),
        };
        let engine = Engine::new(Arc::new(OsSystem), env);
        let watcher = Watcher::new().expect("watcher");
        let mut live = Live { _dir: dir, root, engine, watcher };
        live.text();
        live.watcher.track(&mut live.engine);
        live
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    fn text(&mut self) -> String {
        let ws = self.engine.open(&self.path("repo/pkg/api")).expect("cwd");
        self.engine.system_prompt(ws, None).expect("prompt").text()
    }

    /// Applies batches as they arrive until the build satisfies `done`, for at most
    /// [`DEADLINE`]. Returns the last text.
    fn wait_for(&mut self, done: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let text = self.text();
            self.watcher.track(&mut self.engine);
            if done(&text) || start.elapsed() > DEADLINE {
                return text;
            }
            if let Some(batch) = self.watcher.next_batch(Duration::from_millis(200)) {
                self.watcher.apply(&mut self.engine, &batch);
            }
        }
    }
}

fn write(path: &Path, content: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, content).expect("write");
}

#[test]
fn watches_only_directories_the_graph_looked_at() {
    let live = Live::new();
    let watched = live.watcher.watched();
    assert!(watched.contains(&live.path("repo/pkg/api")));
    assert!(watched.contains(&live.path("repo/rules")));
    // Nothing in the graph depends on what is inside `.git` besides the existence of
    // `HEAD`, `objects/` and `refs/` (P5): nothing below them is watched.
    let refs = live.path("repo/.git/refs");
    assert!(!watched.iter().any(|dir| dir.starts_with(&refs) && *dir != refs));
}

#[test]
fn an_edit_on_disk_reaches_the_next_build() {
    let mut live = Live::new();
    write(&live.path("repo/AGENTS.md"), "root rules, edited");
    let text = live.wait_for(|text| text.contains("root rules, edited"));
    assert!(text.contains("root rules, edited"), "{text}");
}

#[test]
fn a_rule_file_created_in_an_ancestor_is_picked_up() {
    let mut live = Live::new();
    write(&live.path("repo/pkg/AGENTS.md"), "pkg rules");
    let text = live.wait_for(|text| text.contains("pkg rules"));
    assert!(text.contains("/repo/pkg/AGENTS.md\npkg rules"), "{text}");
}

#[test]
fn a_new_directory_under_a_globstar_is_picked_up() {
    let mut live = Live::new();
    write(&live.path("repo/rules/ops/deploy/steps.md"), "steps");
    let text = live.wait_for(|text| text.contains("steps"));
    assert!(text.contains("/repo/rules/ops/deploy/steps.md\nsteps"), "{text}");
    // And the new directories are watched from now on.
    assert!(live.watcher.watched().contains(&live.path("repo/rules/ops/deploy")));
}

#[test]
fn a_deleted_rule_file_disappears() {
    let mut live = Live::new();
    std::fs::remove_file(live.path("repo/rules/base.md")).expect("rm");
    let text = live.wait_for(|text| !text.contains("base"));
    assert!(!text.contains("rules/base.md"), "{text}");
}
