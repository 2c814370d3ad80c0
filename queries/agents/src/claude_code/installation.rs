//! CC10: finding Claude Code's local installation and reading its prose from the bundle
//! (the recognition itself is [`Prose::from_bundle`]).
//!
//! Where to look, first found wins: `--claude-code PATH`, `$CTXGRAPH_CLAUDE_CODE`, then
//! `claude` on `$PATH`. A path may be the native binary, the npm package's `cli.js`, the
//! package directory, or the launcher stub npm links into `bin`: from a stub, the bundle
//! is the platform package beside it (`@anthropic-ai/claude-code-<platform>/claude`).

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use ctxgraph_db::profile::InstallationSearch;
use ctxgraph_db::system::System;

use super::Prose;
use crate::installation::{self, Lookup, SystemFile};

/// How Claude Code's installation is named.
pub const LOOKUP: Lookup =
    Lookup { title: "Claude Code", flag: "--claude-code", env: "CTXGRAPH_CLAUDE_CODE", binary: "claude" };

/// Files smaller than this are launchers, not bundles.
const MIN_BUNDLE_BYTES: u64 = 1024 * 1024;
/// The bundle is scanned in windows this big, overlapping by [`OVERLAP`] so the strings and
/// the code around them are never cut.
const WINDOW: usize = 16 * 1024 * 1024;
const OVERLAP: usize = 16 * 1024;

/// Claude Code's prose from the installation `search` finds;
/// placeholders when there is none, or it does not match.
pub fn prose(search: &InstallationSearch<'_>) -> Prose {
    let fs = search.fs;
    let start = match LOOKUP.start(search) {
        Ok(start) => start,
        Err(reason) => return Prose::unavailable(reason),
    };
    let Some(bundle) = find_bundle(fs, &start) else {
        return Prose::unavailable(format!(
            "{}: no Claude Code bundle (cli.js or native binary) found there",
            start.display()
        ));
    };
    let version = bundle.parent().and_then(|dir| installation::package_version(fs, dir));
    // The first window that holds every text wins; else what the last window said.
    let mut found = None;
    let scanned = installation::scan_windows(SystemFile::open(fs, &bundle), WINDOW, OVERLAP, |window| {
        let prose = Prose::from_bundle(window, &bundle, version.as_deref());
        let done = !prose.is_unavailable();
        found = Some(prose);
        if done { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
    });
    match (scanned, found) {
        (Err(err), _) => Prose::unavailable(format!("{}: {err}", bundle.display())),
        (Ok(()), Some(prose)) => prose,
        (Ok(()), None) => Prose::unavailable(format!("{}: empty", bundle.display())),
    }
}

/// The bundle a path leads to.
fn find_bundle(fs: &dyn System, start: &Path) -> Option<PathBuf> {
    let real = fs.canonicalize(start).ok()?;
    let is_bundle = |p: &Path| installation::is_file_of_at_least(fs, p, MIN_BUNDLE_BYTES);
    if is_bundle(&real) {
        return Some(real);
    }
    // A package directory, or the directory of a launcher inside one.
    let dirs: Vec<&Path> = if installation::is_dir(fs, &real) {
        vec![&real]
    } else {
        real.ancestors().skip(1).take(3).collect()
    };
    for dir in dirs {
        for name in ["cli.js", "claude"] {
            if is_bundle(&dir.join(name)) {
                return Some(dir.join(name));
            }
        }
        // `…/@anthropic-ai/claude-code` → `…/@anthropic-ai/claude-code-<platform>/claude`.
        if dir.file_name().is_some_and(|n| n == "claude-code")
            && let Some(scope) = dir.parent()
            && let Some(bundle) = installation::entries_starting_with(fs, scope, "claude-code-")
                .into_iter()
                .map(|platform| platform.join("claude"))
                .find(|p| is_bundle(p))
        {
            return Some(bundle);
        }
    }
    None
}
