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
use super::request_prose::{self, RequestProse};
use crate::installation::{self, Lookup, SystemFile};
use ctxgraph_db::js_literals;

/// How Claude Code's installation is named.
pub const LOOKUP: Lookup =
    Lookup { title: "Claude Code", flag: "--claude-code", env: "CTXGRAPH_CLAUDE_CODE", binary: "claude" };

/// Files smaller than this are launchers, not bundles.
const MIN_BUNDLE_BYTES: u64 = 1024 * 1024;
/// The bundle is scanned in windows this big, overlapping by [`OVERLAP`] so the strings and
/// the code around them are never cut.
const WINDOW: usize = 16 * 1024 * 1024;
const OVERLAP: usize = 16 * 1024;

/// CC16: where the whole request's single-string texts begin (their opening quote) in a
/// bundle of this size in bytes: Claude Code 2.1.332's native linux-x64 binary. Figures, not
/// text: each is read there and accepted only by its hash.
const KNOWN_SPOTS: &[(u64, [(&str, u64); 5])] = &[(
    402_325_736,
    [
        ("identity", 335_879_182),
        ("identity-appended", 335_879_082),
        ("agents-header", 346_232_218),
        ("agents-footer", 346_232_537),
        ("skill-fallback", 328_671_307),
    ],
)];
/// Bytes read at a known spot: enough for the longest text with its escapes.
const SPOT_BYTES: usize = 4096;

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
        (Ok(()), Some(mut prose)) => {
            if !prose.is_unavailable() {
                prose.request = request_literals(fs, &bundle);
            }
            prose
        }
        (Ok(()), None) => Prose::unavailable(format!("{}: empty", bundle.display())),
    }
}

/// CC16: the whole request's texts that are single string literals of the bundle, accepted
/// by hash ([`RequestProse::with_literals`]).
fn request_literals(fs: &dyn System, bundle: &Path) -> RequestProse {
    let mut wanted = request_prose::literal_table();
    let mut found = std::collections::BTreeMap::new();
    // A bundle of a known size: each text where it sits there, checked by hash all the
    // same; a scan of the whole bundle (seconds) only for what is not found so.
    let known = fs.file_len(bundle).ok().and_then(|len| KNOWN_SPOTS.iter().find(|(size, _)| *size == len));
    for (name, at) in known.map_or(&[][..], |(_, spots)| &spots[..]) {
        let mut buffer = vec![0u8; SPOT_BYTES];
        let Ok(read) = fs.read_at(bundle, *at, &mut buffer) else { continue };
        let one: std::collections::BTreeMap<String, _> =
            wanted.iter().filter(|(n, _)| n == name).map(|(n, r)| (n.clone(), r.clone())).collect();
        found.extend(js_literals::extract(&buffer[..read], &one));
    }
    wanted.retain(|name, _| !found.contains_key(name));
    if wanted.is_empty() {
        return RequestProse::with_literals(&found, bundle);
    }
    // A read error leaves what was found so far: the rest stay placeholders.
    let _ = installation::scan_windows(SystemFile::open(fs, bundle), WINDOW, OVERLAP, |window| {
        for (name, text) in js_literals::extract(window, &wanted) {
            wanted.remove(&name);
            found.insert(name, text);
        }
        if wanted.is_empty() { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
    });
    RequestProse::with_literals(&found, bundle)
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
