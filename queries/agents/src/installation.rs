//! What every agent's installation finder shares: where to start looking, and reading a
//! package through [`System`], windows of a big bundle at a time. Each agent's
//! `installation.rs` says where its own words are and recognises them; the engine hands in
//! the real file system ([`Profile::wording`](ctxgraph_db::profile::Profile::wording)),
//! tests a memory one.

use std::io::{self, Read, Seek, SeekFrom};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use ctxgraph_db::profile::InstallationSearch;
use ctxgraph_db::system::{FileKind, System};

/// How an agent's installation is named: the first that gives a path wins.
#[derive(Clone, Copy, Debug)]
pub struct Lookup {
    /// The agent's name in prose, for the message when nothing names an installation.
    pub title: &'static str,
    /// The `--agent-path` spelling the message suggests.
    pub flag: &'static str,
    /// The environment variable naming the installation (`CTXGRAPH_…`).
    pub env: &'static str,
    /// The command npm, pip or the user put on `PATH`.
    pub binary: &'static str,
}

impl Lookup {
    /// Where to start looking: `explicit` (`--agent-path`), the environment variable, then
    /// the binary on `$PATH`; the reason in words when none gives a path.
    pub fn start(&self, search: &InstallationSearch<'_>) -> Result<PathBuf, String> {
        let vars = search.vars;
        search
            .explicit
            .map(Path::to_path_buf)
            .or_else(|| vars.get(self.env).filter(|v| !v.is_empty()).map(PathBuf::from))
            .or_else(|| on_path(search.fs, vars.get("PATH")?, self.binary))
            .ok_or_else(|| {
                format!(
                    "no {} installation (give {} PATH, set {}, or put `{}` on PATH)",
                    self.title, self.flag, self.env, self.binary
                )
            })
    }
}

/// The first `dir/name` that is a file, over the folders of a `PATH` value.
pub fn on_path(fs: &dyn System, path: &str, name: &str) -> Option<PathBuf> {
    std::env::split_paths(path).map(|dir| dir.join(name)).find(|candidate| is_file(fs, candidate))
}

/// Whether `path` is a regular file (following symlinks).
pub fn is_file(fs: &dyn System, path: &Path) -> bool {
    fs.kind(path) == FileKind::File
}

/// Whether `path` is a directory (following symlinks).
pub fn is_dir(fs: &dyn System, path: &Path) -> bool {
    fs.kind(path) == FileKind::Directory
}

/// Whether `path` is a regular file of at least `bytes` (a bundle, not a launcher).
pub fn is_file_of_at_least(fs: &dyn System, path: &Path, bytes: u64) -> bool {
    is_file(fs, path) && fs.file_len(path).is_ok_and(|len| len >= bytes)
}

/// A file's text, when it is UTF-8.
pub fn read_text(fs: &dyn System, path: &Path) -> Option<String> {
    String::from_utf8(fs.read(path).ok()?).ok()
}

/// The `version` of the `package.json` in `dir`.
pub fn package_version(fs: &dyn System, dir: &Path) -> Option<String> {
    let json: serde_json::Value = serde_json::from_str(&read_text(fs, &dir.join("package.json"))?).ok()?;
    json.get("version")?.as_str().map(str::to_owned)
}

/// The entries of `dir` whose names start with `prefix`, as paths, sorted by name (so the
/// pick does not depend on the disk's listing order).
pub fn entries_starting_with(fs: &dyn System, dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = fs
        .read_dir(dir)
        .map(|entries| {
            entries
                .into_iter()
                .filter(|e| e.name.starts_with(prefix))
                .map(|e| dir.join(e.name.as_str()))
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

/// The npm package `name` (`@scope/name`) a path leads to: the package folder itself, a
/// file in it, or the link npm puts in `bin` (through symlinks, up to three folders up).
pub fn npm_package_dir(fs: &dyn System, start: &Path, name: &str) -> Option<PathBuf> {
    let real = fs.canonicalize(start).ok()?;
    let dirs: Vec<&Path> =
        if is_dir(fs, &real) { vec![&real] } else { real.ancestors().skip(1).take(3).collect() };
    let quoted = format!("\"{name}\"");
    dirs.into_iter()
        .find(|dir| read_text(fs, &dir.join("package.json")).is_some_and(|text| text.contains(&quoted)))
        .map(Path::to_path_buf)
}

/// A file read through [`System::read_at`]: `Read` and `Seek` over a file too big to hold.
#[derive(Debug)]
pub struct SystemFile<'a> {
    fs: &'a dyn System,
    path: PathBuf,
    position: u64,
}

impl<'a> SystemFile<'a> {
    /// `path`, read from its start.
    pub fn open(fs: &'a dyn System, path: &Path) -> SystemFile<'a> {
        SystemFile { fs, path: path.to_path_buf(), position: 0 }
    }
}

impl Read for SystemFile<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let read = self.fs.read_at(&self.path, self.position, buf)?;
        self.position += read as u64;
        Ok(read)
    }
}

impl Seek for SystemFile<'_> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let moved = match to {
            SeekFrom::Start(at) => Some(at),
            SeekFrom::Current(by) => self.position.checked_add_signed(by),
            SeekFrom::End(by) => self.fs.file_len(&self.path)?.checked_add_signed(by),
        };
        self.position =
            moved.ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "seek before the start"))?;
        Ok(self.position)
    }
}

/// Hands `visit` the bytes of `reader` in windows of `window` bytes, each overlapping the
/// one before by `overlap` so nothing `overlap` bytes long is ever cut, until `visit`
/// breaks or the input ends. `window` must exceed `overlap`.
pub fn scan_windows(
    mut reader: impl Read,
    window: usize,
    overlap: usize,
    mut visit: impl FnMut(&[u8]) -> ControlFlow<()>,
) -> io::Result<()> {
    debug_assert!(window > overlap);
    let mut buffer = vec![0u8; window];
    let mut filled = 0;
    loop {
        let read = reader.read(&mut buffer[filled..])?;
        filled += read;
        if read == 0 || filled == buffer.len() {
            if visit(&buffer[..filled]).is_break() || read == 0 {
                return Ok(());
            }
            buffer.copy_within(filled - overlap..filled, 0);
            filled = overlap;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use ctxgraph_db::system::MemorySystem;

    use super::*;

    #[test]
    fn windows_overlap_so_no_needle_is_cut() {
        let fs = MemorySystem::new();
        let mut bytes = vec![b'.'; 100];
        bytes[38..44].copy_from_slice(b"needle");
        fs.write_file("/big", bytes);
        let mut seen = Vec::new();
        scan_windows(SystemFile::open(&fs, Path::new("/big")), 40, 8, |window| {
            seen.push(window.len());
            if window.windows(6).any(|w| w == b"needle") {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })
        .expect("read");
        assert_eq!(seen, vec![40, 40], "found in the second window, across the first one's end");
    }

    #[test]
    fn a_file_reads_and_seeks_through_the_system() {
        let fs = MemorySystem::new();
        fs.write_file("/f", b"0123456789".to_vec());
        let mut file = SystemFile::open(&fs, Path::new("/f"));
        let mut head = [0u8; 4];
        file.read_exact(&mut head).expect("read");
        assert_eq!(&head, b"0123");
        assert_eq!(file.seek(SeekFrom::End(-2)).expect("seek"), 8);
        let mut rest = Vec::new();
        file.read_to_end(&mut rest).expect("read");
        assert_eq!(rest, b"89");
        assert!(file.seek(SeekFrom::Current(-20)).is_err());
    }

    #[test]
    fn nothing_named_says_where_to_name_it() {
        let lookup =
            Lookup { title: "Some Agent", flag: "--agent-path", env: "CTXGRAPH_SOME", binary: "some" };
        let fs = MemorySystem::new();
        fs.write_file("/venv/bin/some", b"#!".to_vec());
        let search = |vars| InstallationSearch { fs: &fs, explicit: None, vars };
        let empty = BTreeMap::new();
        let none = lookup.start(&search(&empty)).expect_err("nothing named");
        assert!(none.contains("CTXGRAPH_SOME") && none.contains("`some` on PATH"), "{none}");
        let vars = BTreeMap::from([("PATH".to_owned(), "/usr/bin:/venv/bin".to_owned())]);
        assert_eq!(lookup.start(&search(&vars)), Ok(PathBuf::from("/venv/bin/some")));
        let vars = BTreeMap::from([("CTXGRAPH_SOME".to_owned(), "/elsewhere".to_owned())]);
        assert_eq!(lookup.start(&search(&vars)), Ok(PathBuf::from("/elsewhere")));
    }
}
