//! A synthetic monorepo on a real directory: a binary tree of directories `depth` deep,
//! `files` source files spread evenly over it, `rules` rule files (half `AGENTS.md`, half
//! `*.rules.md` matched by a `**` instruction), `docs/*.md` along the way, and a config
//! with a plain, a `*` and a `**` pattern. The working directory is the deepest leaf.

use std::path::{Path, PathBuf};

/// The size of a generated monorepo.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// Source files, spread evenly over the tree.
    pub files: usize,
    /// Levels of the binary tree of directories.
    pub depth: usize,
    /// Rule files: half `AGENTS.md`, half `*.rules.md`.
    pub rules: usize,
}

impl Shape {
    /// `CTXGRAPH_BENCH_LARGE=1`: the large case. Otherwise a tenth of it, for quick
    /// runs. `CTXGRAPH_BENCH_FILES`, `_DEPTH`, `_RULES` override either.
    pub fn from_env() -> Self {
        let large = std::env::var_os("CTXGRAPH_BENCH_LARGE").is_some_and(|v| v != "0");
        let base = if large {
            Shape { files: 100_000, depth: 12, rules: 500 }
        } else {
            Shape { files: 10_000, depth: 9, rules: 100 }
        };
        let var = |name: &str, default: usize| {
            std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
        };
        Shape {
            files: var("CTXGRAPH_BENCH_FILES", base.files),
            depth: var("CTXGRAPH_BENCH_DEPTH", base.depth),
            rules: var("CTXGRAPH_BENCH_RULES", base.rules),
        }
    }
}

/// A generated monorepo on disk and the paths the benchmarks use.
pub struct Monorepo {
    /// The repository (a git worktree).
    pub root: PathBuf,
    /// The home directory beside it.
    pub home: PathBuf,
    /// The working directory: the deepest leaf.
    pub cwd: PathBuf,
    /// An `AGENTS.md` on the working directory's walk (in the prompt).
    pub rule_on_walk: PathBuf,
    /// A directory deep in the tree where glob-matched files can be added.
    pub deep_dir: PathBuf,
    /// A source file in the working directory.
    pub deep_file: PathBuf,
    /// Directories and files written.
    pub dirs: usize,
}

/// The config's `instructions`: a plain path, a `*` and a `**` pattern.
pub const INSTRUCTIONS: &[&str] = &["CONVENTIONS.md", "docs/*.md", "**/*.rules.md"];

/// Directories in breadth-first order: `d0`, `d1` children per level.
fn tree_dirs(root: &Path, depth: usize) -> Vec<PathBuf> {
    let mut dirs = vec![root.to_path_buf()];
    let mut level = vec![root.to_path_buf()];
    for _ in 0..depth {
        let next: Vec<PathBuf> = level.iter().flat_map(|d| [d.join("d0"), d.join("d1")]).collect();
        dirs.extend(next.iter().cloned());
        level = next;
    }
    dirs
}

fn write(path: &Path, content: &str) {
    std::fs::write(path, content).unwrap_or_else(|err| panic!("write {}: {err}", path.display()));
}

/// [`generate`] under a canonical `base`, with the line the benches print before their
/// tables: what was written and how long it took.
pub fn generate_reported(base: &Path, shape: Shape) -> (Monorepo, String) {
    let started = std::time::Instant::now();
    let repo = generate(&std::fs::canonicalize(base).expect("canonical base"), shape);
    let report = format!(
        "generated {} files in {} directories (depth {}, {} rule files) in {:.1?}",
        shape.files,
        repo.dirs,
        shape.depth,
        shape.rules,
        started.elapsed()
    );
    (repo, report)
}

/// Writes a monorepo of `shape` under `base` (`repo/` and `home/`).
pub fn generate(base: &Path, shape: Shape) -> Monorepo {
    let root = base.join("repo");
    let home = base.join("home");
    std::fs::create_dir_all(home.join(".config/opencode")).expect("home");
    crate::tree::git_worktree(&root, &mut crate::tree::DiskWriter);
    let patterns: Vec<String> = INSTRUCTIONS.iter().map(|p| format!("{p:?}")).collect();
    write(&root.join("opencode.json"), &format!("{{ \"instructions\": [{}] }}\n", patterns.join(", ")));
    write(&root.join("CONVENTIONS.md"), "# Conventions\nKeep functions small.\n");

    let dirs = tree_dirs(&root, shape.depth);
    for dir in &dirs {
        std::fs::create_dir_all(dir).expect("dir");
    }
    let per_dir = shape.files.div_ceil(dirs.len()).max(1);
    let mut written = 0;
    'files: for dir in &dirs {
        for i in 0..per_dir {
            if written == shape.files {
                break 'files;
            }
            write(&dir.join(format!("f{i}.rs")), "pub fn f() -> u32 { 42 }\n");
            written += 1;
        }
    }

    // The working directory: the leftmost leaf. Every other level on its walk gets an
    // AGENTS.md and every fourth a docs/ directory, so the prompt has rules of each kind.
    let mut cwd = root.clone();
    let mut walk = vec![root.clone()];
    for _ in 0..shape.depth {
        cwd.push("d0");
        walk.push(cwd.clone());
    }
    let mut agents = 0;
    for (level, dir) in walk.iter().enumerate() {
        if level % 2 == 0 {
            write(&dir.join("AGENTS.md"), &format!("# Rules for level {level}\nRun the tests.\n"));
            agents += 1;
        }
        if level % 4 == 0 {
            std::fs::create_dir_all(dir.join("docs")).expect("docs");
            write(&dir.join("docs/style.md"), &format!("Style notes, level {level}.\n"));
            write(&dir.join("docs/testing.md"), &format!("Testing notes, level {level}.\n"));
        }
    }
    // The rest of the rule budget spread evenly over the tree: AGENTS.md (seen by
    // `nearby`) and *.rules.md (matched by the `**` pattern at every level).
    let remaining_agents = (shape.rules / 2).saturating_sub(agents);
    let glob_rules = shape.rules - shape.rules / 2;
    let spread = |count: usize| dirs.iter().step_by((dirs.len() / count.max(1)).max(1)).take(count);
    for dir in spread(remaining_agents) {
        write(&dir.join("AGENTS.md"), "# Package rules\nPrefer small diffs.\n");
    }
    for (i, dir) in spread(glob_rules).enumerate() {
        write(&dir.join(format!("r{i}.rules.md")), &format!("Rule {i}: document public items.\n"));
    }

    Monorepo {
        rule_on_walk: walk[walk.len() / 2 / 2 * 2].join("AGENTS.md"),
        deep_dir: cwd.parent().unwrap_or(&root).join("d1"),
        deep_file: cwd.join("f0.rs"),
        cwd,
        home,
        root,
        dirs: dirs.len(),
    }
}
