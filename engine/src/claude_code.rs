//! CC10: finding Claude Code's local installation and reading its prose from the bundle
//! (I/O, so it lives in the engine; the recognition itself is
//! [`Prose::from_bundle`](ctxgraph_agents::claude_code::Prose::from_bundle)).
//!
//! Where to look, first found wins: `--claude-code PATH`, `$CTXGRAPH_CLAUDE_CODE`, then
//! `claude` on `$PATH`. A path may be the native binary, the npm package's `cli.js`, the
//! package directory, or the launcher stub npm links into `bin`: from a stub, the bundle
//! is the platform package beside it (`@anthropic-ai/claude-code-<platform>/claude`).

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use ctxgraph_agents::claude_code::Prose;

/// The environment variable naming the installation.
pub const CLAUDE_CODE_ENV: &str = "CTXGRAPH_CLAUDE_CODE";

/// Files smaller than this are launchers, not bundles.
const MIN_BUNDLE_BYTES: u64 = 1024 * 1024;
/// The bundle is scanned in chunks this big, overlapping by [`OVERLAP`] so the strings and
/// the code around them are never cut.
const CHUNK: usize = 16 * 1024 * 1024;
const OVERLAP: usize = 16 * 1024;

/// Claude Code's prose from the installation at `explicit`, or found through `vars`
/// (`CTXGRAPH_CLAUDE_CODE`, `PATH`); placeholders when there is none, or it does not match.
pub fn claude_code_prose(
    explicit: Option<&Path>,
    vars: &std::collections::BTreeMap<String, String>,
) -> Prose {
    let named = explicit
        .map(Path::to_path_buf)
        .or_else(|| vars.get(CLAUDE_CODE_ENV).filter(|v| !v.is_empty()).map(PathBuf::from));
    let start = match named {
        Some(path) => path,
        None => match vars.get("PATH").and_then(|path| on_path(path, "claude")) {
            Some(path) => path,
            None => {
                return Prose::unavailable(format!(
                    "no Claude Code installation (give --claude-code PATH, set {CLAUDE_CODE_ENV}, or put `claude` on PATH)"
                ));
            }
        },
    };
    let Some(bundle) = find_bundle(&start) else {
        return Prose::unavailable(format!(
            "{}: no Claude Code bundle (cli.js or native binary) found there",
            start.display()
        ));
    };
    let version = package_version(&bundle);
    match scan(&bundle, version.as_deref()) {
        Ok(prose) => prose,
        Err(err) => Prose::unavailable(format!("{}: {err}", bundle.display())),
    }
}

fn on_path(path: &str, name: &str) -> Option<PathBuf> {
    std::env::split_paths(path).map(|dir| dir.join(name)).find(|candidate| candidate.is_file())
}

/// The bundle a path leads to.
fn find_bundle(start: &Path) -> Option<PathBuf> {
    let real = fs::canonicalize(start).ok()?;
    let is_bundle = |p: &Path| fs::metadata(p).is_ok_and(|m| m.is_file() && m.len() >= MIN_BUNDLE_BYTES);
    if is_bundle(&real) {
        return Some(real);
    }
    // A package directory, or the directory of a launcher inside one.
    let dirs: Vec<&Path> =
        if real.is_dir() { vec![&real] } else { real.ancestors().skip(1).take(3).collect() };
    for dir in dirs {
        for name in ["cli.js", "claude"] {
            if is_bundle(&dir.join(name)) {
                return Some(dir.join(name));
            }
        }
        // `…/@anthropic-ai/claude-code` → `…/@anthropic-ai/claude-code-<platform>/claude`.
        if dir.file_name().is_some_and(|n| n == "claude-code")
            && let Some(scope) = dir.parent()
            && let Ok(entries) = fs::read_dir(scope)
        {
            let mut platforms: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with("claude-code-"))
                .map(|e| e.path().join("claude"))
                .filter(|p| is_bundle(p))
                .collect();
            platforms.sort();
            if let Some(bundle) = platforms.into_iter().next() {
                return Some(bundle);
            }
        }
    }
    None
}

/// The `version` of the `package.json` beside the bundle.
fn package_version(bundle: &Path) -> Option<String> {
    let text = fs::read_to_string(bundle.parent()?.join("package.json")).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    json.get("version")?.as_str().map(str::to_owned)
}

fn scan(bundle: &Path, version: Option<&str>) -> std::io::Result<Prose> {
    let mut file = fs::File::open(bundle)?;
    let mut buffer = vec![0u8; CHUNK];
    let mut filled = 0;
    let mut last = None;
    loop {
        let read = file.read(&mut buffer[filled..])?;
        filled += read;
        if read == 0 || filled == buffer.len() {
            let prose = Prose::from_bundle(&buffer[..filled], bundle, version);
            if !prose.is_unavailable() || read == 0 {
                return Ok(if prose.is_unavailable() { last.unwrap_or(prose) } else { prose });
            }
            last = Some(prose);
            buffer.copy_within(filled - OVERLAP.min(filled)..filled, 0);
            filled = OVERLAP.min(filled);
        }
    }
}
