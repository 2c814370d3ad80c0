//! The real watcher on a temporary directory: edits made on disk reach the next build.
//! Every wait is bounded. `settle` is what `serve` does before each request (a sync point:
//! the inotify queue drained, or a cookie round trip on the portable backend, then the
//! events up to it), so after it the warm build must be fresh.

#![allow(clippy::print_stderr, reason = "the run reports its counts and timings for by-hand runs")]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use ctxgraph_engine::watch::{BackendKind, Watcher, status_clock};
use ctxgraph_engine::{Engine, HostEnv, OsSystem};

const DEADLINE: Duration = Duration::from_secs(10);

/// Every scenario runs on both backends: the Linux one that reads the inotify queue
/// itself, and the portable one (notify's thread, a debouncer, a cookie per sync point).
macro_rules! on_each_backend {
    ($($(#[$attr:meta])* $name:ident),* $(,)?) => {
        mod on_inotify {
            use super::BackendKind;
            $($(#[$attr])* #[test] fn $name() { super::$name(BackendKind::Inotify) })*
        }
        mod on_notify {
            use super::BackendKind;
            $($(#[$attr])* #[test] fn $name() { super::$name(BackendKind::Notify) })*
        }
    };
}

on_each_backend!(
    watches_only_directories_the_graph_looked_at,
    an_edit_on_disk_reaches_the_next_build,
    a_rule_file_created_in_an_ancestor_is_picked_up,
    a_new_directory_under_a_globstar_is_picked_up,
    writes_between_a_build_and_its_watches_are_seen,
    a_deleted_rule_file_disappears,
    an_ancestor_renamed_away_and_back_is_watched_again,
    an_edit_to_a_symlinked_rule_files_target_is_seen,
    a_symlinked_cwd_re_pointed_is_followed,
    writes_to_a_file_nothing_read_touch_no_input,
    a_linked_directorys_target_ancestor_renamed_takes_its_rules_along,
    a_linked_directory_whose_target_appears_later_is_followed,
    a_link_to_a_link_re_pointed_is_followed,
    a_linked_rule_files_target_ancestor_renamed_is_seen,
);

struct Live {
    _dir: tempfile::TempDir,
    root: PathBuf,
    engine: Engine,
    watcher: Watcher,
}

impl Live {
    /// `repo/` (a git worktree, `instructions: ["rules/**/*.md"]`) with a root `AGENTS.md`;
    /// the working directory is `repo/pkg/api`. Built once and watched.
    fn new(backend: BackendKind) -> Self {
        let (mut live, started) = Self::built_unwatched(backend);
        live.watcher.track(&mut live.engine, started);
        live
    }

    /// [`Live::new`] before its watches are added (as `serve` is between a first build and
    /// its reply), with the time the build started.
    fn built_unwatched(backend: BackendKind) -> (Self, SystemTime) {
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
        let engine = Engine::new(Arc::new(OsSystem), env(&root));
        let watcher = Watcher::with_backend(backend).expect("watcher");
        let mut live = Live { _dir: dir, root, engine, watcher };
        let started = status_clock();
        live.text();
        (live, started)
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    fn text(&mut self) -> String {
        let ws = self.engine.open(&self.path("repo/pkg/api")).expect("cwd");
        self.engine.system_prompt(ws, None).expect("prompt").text()
    }

    /// Applies every event for the writes made so far, as `serve` does before a request.
    fn settle(&mut self) -> ctxgraph_engine::Applied {
        let batch = self.watcher.sync_point(Duration::from_secs(5)).expect("the sync point was reached");
        self.watcher.apply(&mut self.engine, &batch)
    }

    /// The warm text after `settle`, and a fresh engine's for the same directory.
    fn warm_and_fresh(&mut self, cwd: &str) -> (String, String) {
        self.settle();
        let started = status_clock();
        let ws = self.engine.open(&self.path(cwd)).expect("cwd");
        let warm = self.engine.system_prompt(ws, None).expect("prompt").text();
        self.watcher.track(&mut self.engine, started);
        let mut fresh = Engine::new(Arc::new(OsSystem), env(&self.root));
        let ws = fresh.open(&self.path(cwd)).expect("cwd");
        (warm, fresh.system_prompt(ws, None).expect("prompt").text())
    }

    /// Applies batches as they arrive until the build satisfies `done`, for at most
    /// [`DEADLINE`]. Returns the last text.
    fn wait_for(&mut self, done: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let started = status_clock();
            let text = self.text();
            self.watcher.track(&mut self.engine, started);
            if done(&text) || start.elapsed() > DEADLINE {
                return text;
            }
            if let Some(batch) = self.watcher.next_batch(Duration::from_millis(200)) {
                self.watcher.apply(&mut self.engine, &batch);
            }
        }
    }
}

fn env(root: &Path) -> HostEnv {
    HostEnv::fixed(root.join("home"))
}

fn write(path: &Path, content: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, content).expect("write");
}

fn watches_only_directories_the_graph_looked_at(backend: BackendKind) {
    let live = Live::new(backend);
    let watched = live.watcher.watched();
    assert!(watched.contains(live.path("repo/pkg/api").as_path()));
    assert!(watched.contains(live.path("repo/rules").as_path()));
    // Nothing in the graph depends on what is inside `.git` besides the existence of
    // `HEAD`, `objects/` and `refs/` (P5): nothing below them is watched.
    let refs = live.path("repo/.git/refs");
    assert!(!watched.iter().any(|dir| dir.starts_with(&refs) && **dir != *refs));
}

fn an_edit_on_disk_reaches_the_next_build(backend: BackendKind) {
    let mut live = Live::new(backend);
    write(&live.path("repo/AGENTS.md"), "root rules, edited");
    let text = live.wait_for(|text| text.contains("root rules, edited"));
    assert!(text.contains("root rules, edited"), "{text}");
}

fn a_rule_file_created_in_an_ancestor_is_picked_up(backend: BackendKind) {
    let mut live = Live::new(backend);
    write(&live.path("repo/pkg/AGENTS.md"), "pkg rules");
    let text = live.wait_for(|text| text.contains("pkg rules"));
    assert!(text.contains("/repo/pkg/AGENTS.md\npkg rules"), "{text}");
}

/// `serve` adds a build's watches after its reply: a rule edited in place and a file
/// created in a directory the build had listed, both before the watches exist, reach the
/// next build (the watcher's `ctime` check), like an edit made afterwards.
fn writes_between_a_build_and_its_watches_are_seen(backend: BackendKind) {
    let (mut live, started) = Live::built_unwatched(backend);
    write(&live.path("repo/rules/base.md"), "base edited");
    write(&live.path("repo/rules/late.md"), "late rule");
    live.watcher.track(&mut live.engine, started);
    let (warm, fresh) = live.warm_and_fresh("repo/pkg/api");
    assert_eq!(warm, fresh);
    assert!(warm.contains("base edited") && warm.contains("late rule"), "{warm}");
}

fn a_new_directory_under_a_globstar_is_picked_up(backend: BackendKind) {
    let mut live = Live::new(backend);
    write(&live.path("repo/rules/ops/deploy/steps.md"), "steps");
    let text = live.wait_for(|text| text.contains("steps"));
    assert!(text.contains("/repo/rules/ops/deploy/steps.md\nsteps"), "{text}");
    // And the new directories are watched from now on.
    assert!(live.watcher.watched().contains(live.path("repo/rules/ops/deploy").as_path()));
}

fn a_deleted_rule_file_disappears(backend: BackendKind) {
    let mut live = Live::new(backend);
    std::fs::remove_file(live.path("repo/rules/base.md")).expect("rm");
    let text = live.wait_for(|text| !text.contains("base"));
    assert!(!text.contains("rules/base.md"), "{text}");
}

/// #14.1: notify drops the watches below a renamed directory; renaming it back must not
/// leave them missing.
fn an_ancestor_renamed_away_and_back_is_watched_again(backend: BackendKind) {
    let mut live = Live::new(backend);
    std::fs::rename(live.path("repo/pkg"), live.path("repo/pkg_x")).expect("mv away");
    live.settle();
    std::fs::rename(live.path("repo/pkg_x"), live.path("repo/pkg")).expect("mv back");
    live.settle();
    write(&live.path("repo/pkg/api/AGENTS.md"), "api rules");
    let (warm, fresh) = live.warm_and_fresh("repo/pkg/api");
    assert!(fresh.contains("api rules"), "{fresh}");
    assert_eq!(warm, fresh);
}

/// #14.2: `AGENTS.md -> shared/rules/team.md`, then the target is edited.
fn an_edit_to_a_symlinked_rule_files_target_is_seen(backend: BackendKind) {
    let mut live = Live::new(backend);
    write(&live.path("repo/shared/rules/team.md"), "team rules v1");
    std::os::unix::fs::symlink("../shared/rules/team.md", live.path("repo/pkg/AGENTS.md")).expect("ln -s");
    let (warm, fresh) = live.warm_and_fresh("repo/pkg/api");
    assert!(warm.contains("team rules v1"), "{warm}");
    assert_eq!(warm, fresh);
    write(&live.path("repo/shared/rules/team.md"), "team rules v2");
    let (warm, fresh) = live.warm_and_fresh("repo/pkg/api");
    assert!(fresh.contains("team rules v2"), "{fresh}");
    assert_eq!(warm, fresh);
    // Re-pointed to another file.
    write(&live.path("repo/shared/rules/other.md"), "other rules");
    replace_symlink("../shared/rules/other.md", &live.path("repo/pkg/AGENTS.md"));
    let (warm, fresh) = live.warm_and_fresh("repo/pkg/api");
    assert!(fresh.contains("other rules"), "{fresh}");
    assert_eq!(warm, fresh);
}

/// #14.3: `ln -sfn release-2 current` while a watched engine serves `current`.
fn a_symlinked_cwd_re_pointed_is_followed(backend: BackendKind) {
    let mut live = Live::new(backend);
    write(&live.path("repo/release-1/AGENTS.md"), "release one");
    write(&live.path("repo/release-2/AGENTS.md"), "release two");
    std::os::unix::fs::symlink("release-1", live.path("repo/current")).expect("ln -s");
    let (warm, _) = live.warm_and_fresh("repo/current");
    assert!(warm.contains("release one"), "{warm}");
    replace_symlink("release-2", &live.path("repo/current"));
    let (warm, fresh) = live.warm_and_fresh("repo/current");
    assert!(fresh.contains("release two"), "{fresh}");
    assert_eq!(warm, fresh);
}

/// #14.4: `ctxgraph watch > watch.log` in the tree: writes to a file no query read touch
/// no input, so they must not cause a rebuild.
fn writes_to_a_file_nothing_read_touch_no_input(backend: BackendKind) {
    let mut live = Live::new(backend);
    let log = live.path("repo/pkg/api/watch.log");
    write(&log, "line 0\n");
    // Its creation changed a listing the graph read.
    live.settle();
    for n in 1..=20 {
        let mut file = std::fs::OpenOptions::new().append(true).open(&log).expect("open log");
        std::io::Write::write_all(&mut file, format!("line {n}\n").as_bytes()).expect("append");
        drop(file);
        let applied = live.settle();
        assert!(!applied.touched_inputs(), "append {n}: {applied:?}");
    }
}

/// #24 D1: `rules/dl -> <root>/outside/p5/t2` is listed by `rules/**/*.md`; renaming an
/// ancestor of the target (`outside`, then `p5`) leaves the link dangling, and its rule must
/// go; renaming it back brings the rule back.
fn a_linked_directorys_target_ancestor_renamed_takes_its_rules_along(backend: BackendKind) {
    let mut live = Live::new(backend);
    write(&live.path("outside/p5/t2/CONTEXT.md"), "rule behind the link");
    std::os::unix::fs::symlink(live.path("outside/p5/t2"), live.path("repo/rules/dl")).expect("ln -s");
    let (warm, fresh) = live.warm_and_fresh("repo/pkg/api");
    assert!(warm.contains("rule behind the link"), "{warm}");
    assert_eq!(warm, fresh);
    for (from, to) in [("outside", "outside_x"), ("outside_x", "outside"), ("outside/p5", "outside/p5_x")] {
        std::fs::rename(live.path(from), live.path(to)).expect("mv");
        let (warm, fresh) = live.warm_and_fresh("repo/pkg/api");
        assert_eq!(fresh.contains("rule behind the link"), to == "outside", "after mv {from} {to}: {fresh}");
        assert_eq!(warm, fresh, "after mv {from} {to}");
    }
}

/// #24 D1, the reverse: a link whose target's ancestors do not exist yet, then do.
fn a_linked_directory_whose_target_appears_later_is_followed(backend: BackendKind) {
    let mut live = Live::new(backend);
    std::fs::create_dir_all(live.path("later")).expect("mkdir");
    std::os::unix::fs::symlink("../../later/p5/t2", live.path("repo/rules/dl")).expect("ln -s");
    let (warm, fresh) = live.warm_and_fresh("repo/pkg/api");
    assert_eq!(warm, fresh);
    write(&live.path("later/p5/t2/CONTEXT.md"), "rule that came later");
    let (warm, fresh) = live.warm_and_fresh("repo/pkg/api");
    assert!(fresh.contains("rule that came later"), "{fresh}");
    assert_eq!(warm, fresh);
}

/// #24 D1: `rules/dl -> ../hop` and `hop -> outside/one`: re-pointing the second link, and
/// renaming an ancestor of its target, change what `rules/dl` holds.
fn a_link_to_a_link_re_pointed_is_followed(backend: BackendKind) {
    let mut live = Live::new(backend);
    write(&live.path("outside/one/CONTEXT.md"), "rule one");
    write(&live.path("outside/two/CONTEXT.md"), "rule two");
    std::os::unix::fs::symlink(live.path("outside/one"), live.path("hop")).expect("ln -s hop");
    std::os::unix::fs::symlink("../../hop", live.path("repo/rules/dl")).expect("ln -s dl");
    let (warm, fresh) = live.warm_and_fresh("repo/pkg/api");
    assert!(warm.contains("rule one"), "{warm}");
    assert_eq!(warm, fresh);
    replace_symlink(&live.path("outside/two").to_string_lossy(), &live.path("hop"));
    let (warm, fresh) = live.warm_and_fresh("repo/pkg/api");
    assert!(fresh.contains("rule two") && !fresh.contains("rule one"), "{fresh}");
    assert_eq!(warm, fresh);
    std::fs::rename(live.path("outside"), live.path("outside_x")).expect("mv");
    let (warm, fresh) = live.warm_and_fresh("repo/pkg/api");
    assert!(!fresh.contains("rule two"), "{fresh}");
    assert_eq!(warm, fresh);
}

/// #24 D1 for a file: `pkg/AGENTS.md -> ../../hop.md -> outside/deep/team/rules.md`; the
/// target's ancestors renamed away and back.
fn a_linked_rule_files_target_ancestor_renamed_is_seen(backend: BackendKind) {
    let mut live = Live::new(backend);
    write(&live.path("outside/deep/team/rules.md"), "team rules");
    std::os::unix::fs::symlink("outside/deep/team/rules.md", live.path("hop.md")).expect("ln -s hop");
    std::os::unix::fs::symlink("../../hop.md", live.path("repo/pkg/AGENTS.md")).expect("ln -s");
    let (warm, fresh) = live.warm_and_fresh("repo/pkg/api");
    assert!(warm.contains("team rules"), "{warm}");
    assert_eq!(warm, fresh);
    for (from, to, present) in [
        ("outside/deep", "outside/deep_x", false),
        ("outside/deep_x", "outside/deep", true),
        ("outside/deep/team", "outside/deep/t", false),
        ("outside/deep/t", "outside/deep/team", true),
        ("outside", "outside_x", false),
    ] {
        std::fs::rename(live.path(from), live.path(to)).expect("mv");
        let (warm, fresh) = live.warm_and_fresh("repo/pkg/api");
        assert_eq!(fresh.contains("team rules"), present, "after mv {from} {to}: {fresh}");
        assert_eq!(warm, fresh, "after mv {from} {to}");
    }
}

/// `ln -sfn`: a new link renamed over the old one, so the change is one atomic event.
fn replace_symlink(target: &str, link: &Path) {
    let temporary = link.with_extension("new-link");
    std::os::unix::fs::symlink(target, &temporary).expect("ln -s");
    std::fs::rename(&temporary, link).expect("mv -T");
}
