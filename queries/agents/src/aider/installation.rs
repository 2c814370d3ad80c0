//! AI9: finding Aider's local installation and reading its wording (the read-only files'
//! introduction) from `aider/coders/base_prompts.py` (the recognition itself is
//! [`Wording::from_prompts`]).
//!
//! Where to look, first found wins: `--agent-path PATH`, `$CTXGRAPH_AIDER`, then `aider` on
//! `$PATH`. A path may be the `aider` package directory, a `site-packages` holding it, a
//! virtual environment (pip's, pipx's), or the `aider` launcher in its `bin` (symlinks
//! followed). The package is only read, never run.

use std::path::{Path, PathBuf};

use ctxgraph_db::profile::InstallationSearch;
use ctxgraph_db::system::System;

use super::Wording;
use super::wording::{PROMPTS_FILE, RECORDED_VERSION};
use crate::installation::{self, Lookup};

/// How Aider's installation is named.
pub const LOOKUP: Lookup =
    Lookup { title: "Aider", flag: "--agent-path", env: "CTXGRAPH_AIDER", binary: "aider" };

/// Aider's wording from the installation `search` finds; a
/// placeholder when there is none, or it does not match.
pub fn wording(search: &InstallationSearch<'_>) -> Wording {
    let fs = search.fs;
    let start = match LOOKUP.start(search) {
        Ok(start) => start,
        Err(reason) => return Wording::unavailable(reason),
    };
    let Some(package) = package_dir(fs, &start) else {
        return Wording::unavailable(format!("{}: no aider package found there", start.display()));
    };
    let prompts = package.join(PROMPTS_FILE);
    let version = installation::read_text(fs, &package.join("__init__.py")).and_then(|text| {
        let line = text.lines().find(|l| l.starts_with("__version__ = "))?;
        Some(line.split('"').nth(1)?.to_owned())
    });
    match fs.read(&prompts) {
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
fn package_dir(fs: &dyn System, start: &Path) -> Option<PathBuf> {
    let is_package = |dir: &Path| {
        installation::is_file(fs, &dir.join(PROMPTS_FILE))
            && installation::is_file(fs, &dir.join("__init__.py"))
    };
    let real = fs.canonicalize(start).ok()?;
    // The launcher's virtual environment: `…/bin/aider` → `…`.
    let base = if installation::is_dir(fs, &real) { real } else { real.parent()?.parent()?.to_path_buf() };
    if is_package(&base) {
        return Some(base);
    }
    if is_package(&base.join("aider")) {
        return Some(base.join("aider"));
    }
    installation::entries_starting_with(fs, &base.join("lib"), "")
        .into_iter()
        .map(|python| python.join("site-packages/aider"))
        .rfind(|dir| is_package(dir))
}
