//! #14: seeded random churn against the real watcher. Edits, creates, deletes, atomic
//! saves, directory renames (ancestors of the working directory included) and removals,
//! symlinked rule files, a symlinked directory and a re-pointed symlinked working
//! directory; after every small batch the warm engine (synced as `serve` syncs before a
//! request) must build exactly what a fresh engine builds.
//!
//! #24 D1: links to directories and files outside the repository, links to links (`hop`,
//! `hop.md`), each created, re-pointed (absolute or relative) and removed, while the
//! ancestors of their targets (`outside/p/q`, `outside/p`, `outside`) are renamed away
//! and back, removed and recreated.
//!
//! CI runs a small count with a fixed seed. A long run by hand:
//! `CTXGRAPH_CHURN_OPS=10000 CTXGRAPH_CHURN_SEED=7 CTXGRAPH_CHURN_SECS=3600 cargo test -p
//! ctxgraph-engine --test churn -- --nocapture`.

#![allow(clippy::print_stderr, reason = "the run reports its counts and timings for by-hand runs")]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ctxgraph_engine::watch::{Watcher, status_clock};
use ctxgraph_engine::{ChangeEvent, Engine, HostEnv, OsSystem};

const CWDS: [&str; 2] = ["repo/a/b/c", "current"];
const DIRS: [&str; 12] = [
    "repo/a",
    "repo/a/b",
    "repo/a/b/c",
    "repo/a/b/c/d",
    "repo/rules",
    "repo/rules/x",
    "repo/rules/x/y",
    "repo/docs",
    "repo/shared",
    "outside",
    "outside/p",
    "outside/p/q",
];
const FILES: [&str; 18] = [
    "repo/AGENTS.md",
    "repo/a/AGENTS.md",
    "repo/a/CLAUDE.md",
    "repo/a/b/AGENTS.md",
    "repo/a/b/c/AGENTS.md",
    "repo/a/b/c/CONTEXT.md",
    "repo/a/b/c/d/AGENTS.md",
    "repo/rules/r1.md",
    "repo/rules/x/r2.md",
    "repo/rules/x/y/r3.md",
    "repo/docs/d1.md",
    "repo/docs/d2.txt",
    "repo/shared/x.md",
    "repo/shared/y.md",
    "home/.config/opencode/AGENTS.md",
    "repo/a/b/c/notes.log",
    "outside/p/q/CONTEXT.md",
    "outside/p/r.md",
];
/// Directory links the globs and the find-up walks list, and what they point at: deep
/// targets whose ancestors the churn renames, a link (`hop`), and a path that may not exist.
const DIR_LINKS: [&str; 3] = ["repo/rules/dl", "repo/rules/x/dl2", "repo/rules/x/y/dl3"];
const DIR_TARGETS: [&str; 5] = ["outside/p/q", "outside/p", "hop", "repo/shared", "outside/gone/q"];
/// Rule files made links, and their targets (`hop.md` a link itself).
const FILE_LINKS: [&str; 3] = ["repo/a/CLAUDE.md", "repo/a/b/AGENTS.md", "repo/rules/r1.md"];
const FILE_TARGETS: [&str; 4] = ["outside/p/q/CONTEXT.md", "outside/p/r.md", "hop.md", "outside/gone/r.md"];
/// The links other links point at, and where they point (never back into a linked
/// directory: a loop would be a different test).
const HOPS: [(&str, &[&str]); 2] = [
    ("hop", &["outside/p/q", "outside/p", "repo/shared", "outside/gone"]),
    ("hop.md", &["outside/p/q/CONTEXT.md", "outside/p/r.md", "repo/shared/y.md"]),
];
const CONFIGS: [&str; 4] = [
    r#"{ "instructions": ["rules/**/*.md", "docs/*.md"] }"#,
    r#"{ "instructions": ["docs/*", "shared/x.md"] }"#,
    r#"{ "instructions": ["rules/x/**/*.md"] }"#,
    r#"{ "instructions": [ "#,
];

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

struct World {
    _dir: tempfile::TempDir,
    root: PathBuf,
    rng: fastrand::Rng,
    /// Operations applied, for the report of a divergence.
    log: Vec<String>,
}

impl World {
    fn new(seed: u64) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = std::fs::canonicalize(dir.path()).expect("canonical");
        let world = World { _dir: dir, root, rng: fastrand::Rng::with_seed(seed), log: Vec::new() };
        for git in ["repo/.git/objects", "repo/.git/refs", "home/.config/opencode"] {
            std::fs::create_dir_all(world.path(git)).expect("mkdir");
        }
        world.write("repo/.git/HEAD", "ref: refs/heads/main\n");
        world.write("repo/opencode.json", CONFIGS[0]);
        for file in [
            "repo/AGENTS.md",
            "repo/a/b/c/AGENTS.md",
            "repo/rules/r1.md",
            "repo/rules/x/y/r3.md",
            "repo/docs/d1.md",
            "repo/shared/x.md",
            "outside/p/q/CONTEXT.md",
            "outside/p/r.md",
        ] {
            world.write(file, &format!("{file} v0"));
        }
        std::os::unix::fs::symlink(world.path("repo/a/b/c"), world.path("current")).expect("ln -s");
        std::os::unix::fs::symlink(world.path("outside/p/q"), world.path("repo/rules/dl")).expect("ln -s");
        std::os::unix::fs::symlink(world.path("outside/p"), world.path("hop")).expect("ln -s");
        std::os::unix::fs::symlink("../../../hop", world.path("repo/rules/x/dl2")).expect("ln -s");
        std::os::unix::fs::symlink("outside/p/r.md", world.path("hop.md")).expect("ln -s");
        world
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    fn write(&self, relative: &str, content: &str) {
        let path = self.path(relative);
        let _ = std::fs::create_dir_all(path.parent().expect("parent"));
        // A parent may be a file or a dangling link after earlier operations: skip then.
        let _ = std::fs::write(path, content);
    }

    fn env(&self) -> HostEnv {
        HostEnv::fixed(self.path("home"))
    }

    /// One random operation; returns what it did.
    fn operate(&mut self, n: u64) -> String {
        let file = FILES[self.rng.usize(..FILES.len())];
        let dir = DIRS[self.rng.usize(..DIRS.len())];
        let (file_path, dir_path) = (self.path(file), self.path(dir));
        let moved = self.path(&format!("{dir}_moved"));
        match self.rng.u8(..15) {
            0..=2 => {
                self.write(file, &format!("{file} v{n}"));
                format!("write {file}")
            }
            3 => {
                let _ = std::fs::remove_file(&file_path);
                format!("rm {file}")
            }
            4 => {
                // An editor's atomic save: a temporary file renamed over the original.
                let temporary = file_path.with_extension("swp");
                self.write(&format!("{file}.tmp-save"), &format!("{file} saved v{n}"));
                let _ = std::fs::rename(
                    file_path.with_extension(format!("{}.tmp-save", extension(file))),
                    &temporary,
                );
                let _ = std::fs::rename(&temporary, &file_path);
                format!("atomic save {file}")
            }
            5 => {
                if moved.exists() && !dir_path.exists() {
                    let _ = std::fs::rename(&moved, &dir_path);
                    format!("mv {dir}_moved {dir}")
                } else {
                    let _ = std::fs::rename(&dir_path, &moved);
                    format!("mv {dir} {dir}_moved")
                }
            }
            6 => {
                // Away and straight back, before the watcher has looked.
                let _ = std::fs::rename(&dir_path, &moved);
                let _ = std::fs::rename(&moved, &dir_path);
                format!("mv {dir} away and back")
            }
            7 => {
                if self.rng.bool() {
                    let _ = std::fs::remove_dir_all(&dir_path);
                    format!("rm -r {dir}")
                } else {
                    let _ = std::fs::create_dir_all(&dir_path);
                    format!("mkdir -p {dir}")
                }
            }
            8 => {
                let target =
                    ["repo/shared/x.md", "repo/shared/y.md", "repo/shared/missing.md"][self.rng.usize(..3)];
                replace_symlink(&self.path(target), &file_path);
                format!("ln -sfn {target} {file}")
            }
            9 => {
                let target = ["repo/a/b/c", "repo/a/b", "repo/rules/x", "repo/a/b/c/d"][self.rng.usize(..4)];
                replace_symlink(&self.path(target), &self.path("current"));
                format!("ln -sfn {target} current")
            }
            10 => {
                let link = self.path("repo/rules/linked");
                if self.rng.bool() {
                    replace_symlink(&self.path("repo/shared"), &link);
                    "ln -sfn repo/shared repo/rules/linked".to_owned()
                } else {
                    let _ = std::fs::remove_file(&link);
                    "rm repo/rules/linked".to_owned()
                }
            }
            12 => self.churn_link(&DIR_LINKS, &DIR_TARGETS),
            13 => self.churn_link(&FILE_LINKS, &FILE_TARGETS),
            14 => {
                let (hop, targets) = HOPS[self.rng.usize(..HOPS.len())];
                self.churn_link(&[hop], targets)
            }
            _ => {
                let config = self.rng.usize(..CONFIGS.len());
                self.write("repo/opencode.json", CONFIGS[config]);
                format!("config #{config}")
            }
        }
    }
}

impl World {
    /// One of `links` removed (one time in four) or made to point at one of `targets`,
    /// absolute or relative.
    fn churn_link(&mut self, links: &[&str], targets: &[&str]) -> String {
        let link = links[self.rng.usize(..links.len())];
        if self.rng.u8(..4) == 0 {
            let _ = std::fs::remove_file(self.path(link));
            return format!("rm {link}");
        }
        let target = targets[self.rng.usize(..targets.len())];
        let written = if self.rng.bool() { self.path(target) } else { relative_to_link(link, target) };
        replace_symlink(&written, &self.path(link));
        format!("ln -sfn {} {link}", written.display())
    }
}

/// `target` as a relative link at `link` writes it (both relative to the world's root).
fn relative_to_link(link: &str, target: &str) -> PathBuf {
    let depth = Path::new(link).components().count() - 1;
    let mut relative: PathBuf = std::iter::repeat_n("..", depth).collect();
    relative.push(target);
    relative
}

fn extension(file: &str) -> &str {
    Path::new(file).extension().and_then(|e| e.to_str()).unwrap_or("")
}

/// `ln -sfn`: the new link is renamed over the old path in one step.
fn replace_symlink(target: &Path, link: &Path) {
    let Some(parent) = link.parent() else { return };
    if !parent.is_dir() {
        return;
    }
    let temporary = parent.join(".new-link");
    let _ = std::fs::remove_file(&temporary);
    if std::os::unix::fs::symlink(target, &temporary).is_ok() && std::fs::rename(&temporary, link).is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
}

/// The text built for `cwd`, or the error, as a caller would see it.
fn build(engine: &mut Engine, cwd: &Path) -> String {
    match engine.open(cwd).and_then(|ws| engine.system_prompt(ws, None)) {
        Ok(prompt) => prompt.text(),
        Err(err) => format!("error: {err}"),
    }
}

#[test]
fn the_warm_prompt_matches_a_fresh_build_under_random_churn() {
    let ops = env_number("CTXGRAPH_CHURN_OPS", 300);
    let seed = env_number("CTXGRAPH_CHURN_SEED", 0x5eed);
    let time_bound = Duration::from_secs(env_number("CTXGRAPH_CHURN_SECS", 120));
    let trace = std::env::var_os("CTXGRAPH_CHURN_TRACE").is_some();
    let mut world = World::new(seed);
    let mut warm = Engine::new(Arc::new(OsSystem), world.env());
    let mut watcher = Watcher::new().expect("watcher");
    let cwds: Vec<PathBuf> = CWDS.iter().map(|cwd| world.path(cwd)).collect();
    let first = status_clock();
    for cwd in &cwds {
        build(&mut warm, cwd);
    }
    watcher.track(&mut warm, first);

    let started = Instant::now();
    let (mut done, mut batches, mut fallbacks) = (0u64, 0u64, 0u64);
    let mut divergences: Vec<String> = Vec::new();
    while done < ops && started.elapsed() < time_bound {
        let size = world.rng.u64(1..=4).min(ops - done);
        for _ in 0..size {
            done += 1;
            let op = world.operate(done);
            world.log.push(op);
        }
        batches += 1;
        // What `serve` does before each request.
        let synced = watcher.sync_point(Duration::from_secs(5));
        if trace {
            eprintln!(
                "batch {batches}: ops {:?}\n  events {synced:?}",
                &world.log[world.log.len() - usize::try_from(size).expect("at most 4")..]
            );
        }
        if let Some(batch) = synced {
            watcher.apply(&mut warm, &batch);
        } else {
            fallbacks += 1;
            watcher.pending();
            warm.apply_changes(&[ChangeEvent::Rescan]);
        }
        if trace {
            use ctxgraph_db::Db as _;
            for probe in ["repo/rules", "repo/rules/x", "repo/rules/x/r2.md"] {
                let path = world.path(probe);
                let kind = warm.db().files().existing(&path).map(|f| f.kind(warm.db()));
                eprintln!("  input {probe}: {kind:?}");
            }
        }
        let reads = status_clock();
        let mut fresh = Engine::new(Arc::new(OsSystem), world.env());
        for cwd in &cwds {
            let (warm_text, fresh_text) = (build(&mut warm, cwd), build(&mut fresh, cwd));
            if trace {
                let first = |text: &str| text.lines().next().unwrap_or_default().to_owned();
                eprintln!("  {}: warm {:?} fresh {:?}", cwd.display(), first(&warm_text), first(&fresh_text));
            }
            if warm_text != fresh_text && divergences.len() < 5 {
                let recent = world.log[world.log.len().saturating_sub(8)..].join("; ");
                divergences.push(format!(
                    "after op {done} (batch {batches}), cwd {}: recent ops [{recent}]\n--- warm\n{warm_text}\n--- fresh\n{fresh_text}",
                    cwd.display()
                ));
            } else if warm_text != fresh_text {
                divergences.push(String::new());
            }
        }
        watcher.track(&mut warm, reads);
    }
    eprintln!(
        "churn: seed {seed}, {done} operations in {batches} batches, {} divergent builds, {fallbacks} sync-point fallbacks, {:.1?}",
        divergences.len(),
        started.elapsed()
    );
    assert!(
        divergences.is_empty(),
        "{} divergent builds; first ones:\n{}",
        divergences.len(),
        divergences.join("\n\n")
    );
}
