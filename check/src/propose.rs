//! `ctxgraph init-check`: a first scenarios file for a repository.
//!
//! One scenario for the root, and one per directory that holds a rule file of the agent a
//! scenario pins by default (the rule-file names among its profile's files: opencode's
//! `AGENTS.md`, `CLAUDE.md`, `CONTEXT.md`, I1), started there. The walk honours `.gitignore`
//! and skips hidden directories, through the `ignore` crate (ripgrep's walker).

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use ctxgraph_db::agent::Agent;

/// The rule-file names of the agent a scenario pins by default: the plain Markdown names
/// among the files its profile reads (no folder, no glob).
fn rule_names() -> Vec<&'static str> {
    let about = ctxgraph_engine::profiles::profile(Agent::default()).about();
    let markdown = |name: &str| Path::new(name).extension().is_some_and(|e| e.eq_ignore_ascii_case("md"));
    about.files.iter().copied().filter(|f| markdown(f) && !f.contains(['/', '*', '{'])).collect()
}

/// The directories with a rule file, relative to `base`, sorted; `""` is the root.
pub fn rule_directories(base: &Path) -> Vec<PathBuf> {
    let names = rule_names();
    let mut dirs = BTreeSet::new();
    dirs.insert(PathBuf::new());
    let walk = ignore::WalkBuilder::new(base).require_git(false).sort_by_file_name(Ord::cmp).build();
    for entry in walk.flatten() {
        let is_rule = entry.file_type().is_some_and(|t| t.is_file())
            && entry.file_name().to_str().is_some_and(|n| names.contains(&n));
        if let Some(dir) = entry.path().parent().filter(|_| is_rule)
            && let Ok(relative) = dir.strip_prefix(base)
        {
            dirs.insert(relative.to_path_buf());
        }
    }
    dirs.into_iter().collect()
}

/// The text of a scenarios file with a scenario per directory.
pub fn propose(base: &Path) -> String {
    let mut out = String::from(
        "# Scenarios for `ctxgraph check`: each pins the prompt opencode builds when started in\n\
         # `cwd`, in a hermetic world (no real home, global or managed config; a pinned date).\n\
         # Paths are relative to this file. Optional keys: reads, section, model, home,\n\
         # config_dir, env, date, platform (see the README).\n",
    );
    let mut taken = BTreeSet::new();
    for dir in rule_directories(base) {
        let mut name = scenario_name(&dir);
        let stem = name.clone();
        let mut n = 2;
        while !taken.insert(name.clone()) {
            name = format!("{stem}-{n}");
            n += 1;
        }
        let cwd = if dir.as_os_str().is_empty() {
            ".".to_owned()
        } else {
            dir.to_string_lossy().replace('\\', "/")
        };
        let _ = write!(out, "\n[scenario.{name}]\ncwd = {}\n", toml::Value::String(cwd));
    }
    out
}

/// `packages/api` → `packages-api`; the root is `root`. Only file-name-safe characters.
fn scenario_name(dir: &Path) -> String {
    let joined: String = dir
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '_' | '.') { c } else { '-' })
        .collect();
    let trimmed = joined.trim_matches(|c| c == '-' || c == '.');
    if trimmed.is_empty() { "root".to_owned() } else { trimmed.to_owned() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_file_names() {
        assert_eq!(scenario_name(Path::new("")), "root");
        assert_eq!(scenario_name(Path::new("packages/api")), "packages-api");
        assert_eq!(scenario_name(Path::new("a b/ü")), "a-b");
        assert_eq!(scenario_name(Path::new("ü")), "root");
    }
}
