//! AI9: finding Aider's local installation and reading its wording (the read-only files'
//! introduction) from `aider/coders/base_prompts.py`. I/O, so it lives in the engine; the
//! recognition itself is [`Wording::from_prompts`](ctxgraph_agents::aider::Wording::from_prompts).
//!
//! Where to look, first found wins: `--agent-path PATH`, `$CTXGRAPH_AIDER`, then `aider` on
//! `$PATH`. A path may be the `aider` package directory, a `site-packages` holding it, a
//! virtual environment (pip's, pipx's), or the `aider` launcher in its `bin` (symlinks
//! followed). The package is only read, never run.

use std::fs;
use std::path::{Path, PathBuf};

use ctxgraph_agents::aider::Wording;
use ctxgraph_agents::aider::wording::{PROMPTS_FILE, RECORDED_VERSION};

/// The environment variable naming the installation.
pub const AIDER_ENV: &str = "CTXGRAPH_AIDER";

/// Aider's wording from the installation at `explicit`, or found through `vars`
/// (`CTXGRAPH_AIDER`, `PATH`); a placeholder when there is none, or it does not match.
pub fn aider_wording(explicit: Option<&Path>, vars: &std::collections::BTreeMap<String, String>) -> Wording {
    let named = explicit
        .map(Path::to_path_buf)
        .or_else(|| vars.get(AIDER_ENV).filter(|v| !v.is_empty()).map(PathBuf::from))
        .or_else(|| {
            let path = vars.get("PATH")?;
            std::env::split_paths(path).map(|dir| dir.join("aider")).find(|c| c.is_file())
        });
    let Some(start) = named else {
        return Wording::unavailable(format!(
            "no Aider installation (give --agent-path PATH, set {AIDER_ENV}, or put `aider` on PATH)"
        ));
    };
    let Some(package) = package_dir(&start) else {
        return Wording::unavailable(format!("{}: no aider package found there", start.display()));
    };
    let prompts = package.join(PROMPTS_FILE);
    let version = fs::read_to_string(package.join("__init__.py")).ok().and_then(|text| {
        let line = text.lines().find(|l| l.starts_with("__version__ = "))?;
        Some(line.split('"').nth(1)?.to_owned())
    });
    match fs::read(&prompts) {
        Ok(bytes) => Wording::from_prompts(&bytes, &prompts, version.as_deref()).unwrap_or_else(|why| {
            Wording::unavailable(format!(
                "{}: {why} (Aider {RECORDED_VERSION}'s is known)",
                prompts.display()
            ))
        }),
        Err(err) => Wording::unavailable(format!("{}: {err}", prompts.display())),
    }
}

/// The `aider` package directory a path leads to.
fn package_dir(start: &Path) -> Option<PathBuf> {
    let is_package = |dir: &Path| dir.join(PROMPTS_FILE).is_file() && dir.join("__init__.py").is_file();
    let real = fs::canonicalize(start).ok()?;
    // The launcher's virtual environment: `…/bin/aider` → `…`.
    let base = if real.is_dir() { real } else { real.parent()?.parent()?.to_path_buf() };
    if is_package(&base) {
        return Some(base);
    }
    if is_package(&base.join("aider")) {
        return Some(base.join("aider"));
    }
    let mut found: Vec<PathBuf> = fs::read_dir(base.join("lib"))
        .ok()?
        .filter_map(Result::ok)
        .map(|entry| entry.path().join("site-packages/aider"))
        .filter(|dir| is_package(dir))
        .collect();
    found.sort();
    found.pop()
}
