//! CP16: finding GitHub Copilot CLI's local installation and reading its wording from the
//! native runtime (the recognition itself is [`Scan`]).
//!
//! Where to look, first found wins: `--copilot PATH`, `$CTXGRAPH_COPILOT`, then `copilot`
//! on `$PATH`. npm links `copilot` to the `@github/copilot` package's launcher, which runs
//! the platform package beside it (`@github/copilot-<platform>/copilot`): a single
//! executable whose embedded archive (`copilot.tgz`, gzip'd tar) holds the native runtime,
//! `prebuilds/<platform>/runtime.node`, where the strings are. A path may name the
//! launcher, either package directory, the executable, the runtime itself, or a folder the
//! executable unpacked the archive into (`~/.cache/copilot/pkg/<platform>/<version>`).

use std::io::{Read, Seek, SeekFrom};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use ctxgraph_db::profile::InstallationSearch;
use ctxgraph_db::system::System;

use super::Prose;
use super::prose::Scan;
use crate::installation::{self, Lookup, SystemFile};

/// How Copilot CLI's installation is named.
pub const LOOKUP: Lookup =
    Lookup { title: "Copilot CLI", flag: "--copilot", env: "CTXGRAPH_COPILOT", binary: "copilot" };

/// Files smaller than this are launchers, not the executable.
const MIN_EXECUTABLE_BYTES: u64 = 1024 * 1024;
/// The archive's name as the executable's asset table stores it: its length (8 bytes,
/// little-endian), the name, then the archive's length and the archive.
const ASSET: &[u8] = b"\x0b\x00\x00\x00\x00\x00\x00\x00copilot.tgz";
/// Windows the runtime is searched in, overlapping so no string is cut.
const WINDOW: usize = 16 * 1024 * 1024;
const OVERLAP: usize = 64 * 1024;

/// Copilot's wording from the installation `search` finds;
/// placeholders when there is none, or it does not match.
pub fn prose(search: &InstallationSearch<'_>) -> Prose {
    let fs = search.fs;
    let start = match LOOKUP.start(search) {
        Ok(start) => start,
        Err(reason) => return Prose::unavailable(reason),
    };
    match locate(fs, &start) {
        None => Prose::unavailable(format!(
            "{}: no Copilot CLI executable or runtime.node found there",
            start.display()
        )),
        Some(found) => read_prose(fs, &found).unwrap_or_else(Prose::unavailable),
    }
}

/// What a path leads to.
#[derive(Debug)]
enum Found {
    /// `runtime.node` itself.
    Runtime { path: PathBuf, version: Option<String> },
    /// The single executable, with the archive inside.
    Executable { path: PathBuf, version: Option<String> },
}

fn locate(fs: &dyn System, start: &Path) -> Option<Found> {
    let real = fs.canonicalize(start).ok()?;
    let big = |p: &Path| installation::is_file_of_at_least(fs, p, MIN_EXECUTABLE_BYTES);
    let version = |dir: &Path| installation::package_version(fs, dir);
    if big(&real) {
        return Some(if real.file_name().is_some_and(|n| n == "runtime.node") {
            // …/<version>/prebuilds/<platform>/runtime.node
            Found::Runtime { version: real.ancestors().nth(3).and_then(version), path: real }
        } else {
            Found::Executable { version: version(real.parent()?), path: real }
        });
    }
    // A directory (a package, an unpacked archive), or the launcher inside one.
    let dirs: Vec<&Path> = if installation::is_dir(fs, &real) {
        vec![&real]
    } else {
        real.ancestors().skip(1).take(2).collect()
    };
    for dir in dirs {
        if let Some(runtime) = installation::entries_starting_with(fs, &dir.join("prebuilds"), "")
            .into_iter()
            .map(|platform| platform.join("runtime.node"))
            .find(|p| installation::is_file(fs, p))
        {
            return Some(Found::Runtime { path: runtime, version: version(dir) });
        }
        for name in ["copilot", "copilot.exe"] {
            if big(&dir.join(name)) {
                return Some(Found::Executable { path: dir.join(name), version: version(dir) });
            }
        }
        // `…/@github/copilot` → `…/@github/copilot-<platform>/copilot`.
        if dir.file_name().is_some_and(|n| n == "copilot")
            && let Some(scope) = dir.parent()
            && let Some(exe) = installation::entries_starting_with(fs, scope, "copilot-")
                .into_iter()
                .flat_map(|platform| ["copilot", "copilot.exe"].map(|n| platform.join(n)))
                .find(|p| big(p))
        {
            let version = exe.parent().and_then(version);
            return Some(Found::Executable { path: exe, version });
        }
    }
    None
}

fn read_prose(fs: &dyn System, found: &Found) -> Result<Prose, String> {
    match found {
        Found::Runtime { path, version } => {
            let mut scan = Scan::new(version.as_deref())?;
            feed(SystemFile::open(fs, path), &mut scan).map_err(|e| format!("{}: {e}", path.display()))?;
            scan.finish(path)
        }
        Found::Executable { path, version } => {
            let mut scan = Scan::new(version.as_deref())?;
            let runtime =
                runtime_in_executable(fs, path, &mut scan).map_err(|e| format!("{}: {e}", path.display()))?;
            scan.finish(&path.join(runtime))
        }
    }
}

/// Feeds `reader` to `scan` in overlapping windows until the wording is found.
fn feed(reader: impl Read, scan: &mut Scan) -> std::io::Result<()> {
    installation::scan_windows(reader, WINDOW, OVERLAP, |window| {
        scan.feed(window);
        if scan.is_done() { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
    })
}

/// Finds the archive in the executable, inflates it as it streams, walks its tar entries to
/// `…/prebuilds/<platform>/runtime.node` and feeds that entry to `scan`. Returns the entry's
/// name.
fn runtime_in_executable(fs: &dyn System, path: &Path, scan: &mut Scan) -> Result<String, String> {
    let at = find_asset(fs, path).map_err(|e| e.to_string())?.ok_or("no copilot.tgz archive inside")?;
    let mut file = SystemFile::open(fs, path);
    file.seek(SeekFrom::Start(at)).map_err(|e| e.to_string())?;
    let mut length = [0u8; 8];
    file.read_exact(&mut length).map_err(|e| e.to_string())?;
    let archive = flate2::read::GzDecoder::new(file.take(u64::from_le_bytes(length)));
    let mut tar = tar::Archive::new(archive);
    for entry in tar.entries().map_err(|e| e.to_string())? {
        let entry = entry.map_err(|e| e.to_string())?;
        let name = entry.path().map_err(|e| e.to_string())?.to_string_lossy().into_owned();
        if entry.header().entry_type().is_file()
            && name.ends_with("/runtime.node")
            && name.contains("prebuilds/")
        {
            feed(entry, scan).map_err(|e| e.to_string())?;
            return Ok(name);
        }
    }
    Err("no prebuilds/*/runtime.node in the archive".to_owned())
}

/// The offset right after the archive's name in the executable.
fn find_asset(fs: &dyn System, path: &Path) -> std::io::Result<Option<u64>> {
    let mut base = 0u64;
    let mut found = None;
    installation::scan_windows(SystemFile::open(fs, path), WINDOW, ASSET.len(), |window| {
        if let Some(at) = memchr::memmem::find(window, ASSET) {
            found = Some(base + (at + ASSET.len()) as u64);
            return ControlFlow::Break(());
        }
        base += window.len().saturating_sub(ASSET.len()) as u64;
        ControlFlow::Continue(())
    })?;
    Ok(found)
}
