//! The only door to the outside world.
//!
//! Every query reads the file system through [`System`], so tests run on [`MemorySystem`]
//! and the engine plugs in the real OS. Nothing in this crate touches `std::fs` or
//! `std::env` directly (enforced by `clippy.toml`).

use std::collections::{BTreeSet, HashMap};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::RwLock;

pub use compact_str::CompactString;

/// What a path points at, after following symlinks (what `stat` or `access` sees).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FileKind {
    /// Nothing there (`ENOENT`, or a dangling symlink).
    Missing,
    /// A regular file.
    File,
    /// A directory.
    Directory,
    /// Exists but is neither a regular file nor a directory (socket, fifo, device).
    Other,
    /// `stat` failed with something other than "not found": a symlink loop (`ELOOP`),
    /// a component we may not search (`EACCES`), a name that is too long.
    Inaccessible,
}

impl FileKind {
    /// F1: opencode's `exists` is `access(p)`, true for any kind of entry.
    pub fn exists(self) -> bool {
        matches!(self, FileKind::File | FileKind::Directory | FileKind::Other)
    }

    /// The kind a failed `stat` implies: missing for "not found", inaccessible otherwise.
    pub fn from_io_error(err: &io::Error) -> FileKind {
        match err.kind() {
            io::ErrorKind::NotFound | io::ErrorKind::NotADirectory => FileKind::Missing,
            _ => FileKind::Inaccessible,
        }
    }
}

/// One entry of a directory listing, typed as `readdir` reports it (symlinks not followed).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DirEntry {
    /// The entry's file name.
    pub name: CompactString,
    /// What it is, without following a symlink.
    pub kind: EntryKind,
}

/// What a directory entry is, as `readdir` reports it (`d_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory.
    Directory,
    /// A symbolic link, not followed.
    Symlink,
    /// A socket, fifo or device.
    Other,
}

/// File-system access as the queries need it. Implementations must be deterministic for a
/// given state of the world: the queries memoize what they return.
pub trait System: Send + Sync + std::fmt::Debug {
    /// Follows symlinks.
    fn kind(&self, path: &Path) -> FileKind;
    /// The whole file, as bytes. Directories fail with `IsADirectory`.
    fn read(&self, path: &Path) -> io::Result<Vec<u8>>;
    /// The entries of a directory in the file system's own listing (`readdir`) order, not
    /// sorted: agents differ in what they do with that order (some send files as listed,
    /// some reversed, some sorted), so each profile applies its agent's rule.
    fn read_dir(&self, path: &Path) -> io::Result<Vec<DirEntry>>;
    /// `realpath`: absolute, symlinks resolved.
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf>;
    /// [`System::kind`], and when the path's status last changed (`ctime`, following
    /// symlinks: written, truncated, renamed into place, entries added or removed) where
    /// the system keeps such a time. A file watcher asks this of what it starts watching
    /// after a build read it, for the writes between that read and the watch.
    fn kind_and_change(&self, path: &Path) -> (FileKind, Option<std::time::SystemTime>) {
        (self.kind(path), None)
    }
    /// A regular file's length in bytes, following symlinks.
    fn file_len(&self, path: &Path) -> io::Result<u64> {
        Ok(self.read(path)?.len() as u64)
    }
    /// Up to `buf.len()` bytes of a regular file from `offset` (`pread`); 0 past the end.
    /// For files too big for [`System::read`], such as an agent's bundled executable, which
    /// is searched for the agent's own wording a window at a time.
    fn read_at(&self, path: &Path, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let bytes = self.read(path)?;
        let start = usize::try_from(offset).unwrap_or(usize::MAX).min(bytes.len());
        let end = start.saturating_add(buf.len()).min(bytes.len());
        buf[..end - start].copy_from_slice(&bytes[start..end]);
        Ok(end - start)
    }
}

/// An in-memory file system for tests: files, directories and symlinks, with files that
/// can be made unreadable (as `chmod 000` would for a non-root user), listed in an order
/// the test chooses ([`ListingOrder`], newest first by default).
#[derive(Debug, Default)]
pub struct MemorySystem {
    nodes: RwLock<Nodes>,
}

/// The order a [`MemorySystem`] lists a directory's entries in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ListingOrder {
    /// Newest entry first, as tmpfs lists: a fixture written in name order lists reversed,
    /// so a query that assumes a sorted listing is caught.
    #[default]
    NewestFirst,
    /// Oldest entry first (creation order).
    OldestFirst,
    /// By name, byte order.
    ByName,
    /// By a hash of the name, as ext4 lists a directory (its hash is seeded per file system;
    /// this one is FNV-1a, unseeded): neither sorted nor creation order, the same every run.
    Hashed,
}

/// FNV-1a, 64 bits: a fixed hash of a name for [`ListingOrder::Hashed`] (std's hasher is
/// seeded per process, and no crate here offers a fixed one this small).
fn name_hash(name: &str) -> u64 {
    name.bytes()
        .fold(0xcbf2_9ce4_8422_2325, |hash, byte| (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3))
}

/// Every path of a [`MemorySystem`]: looked up by hash, as a real file system's lookups of
/// names cost about the same however many files there are (a map ordered by path made
/// each lookup of a path component cost a dozen path comparisons in a tree of 10 000
/// files), and kept in order for listings.
#[derive(Debug, Default)]
struct Nodes {
    by_path: HashMap<PathBuf, Node>,
    /// The keys of `by_path`, in order.
    sorted: BTreeSet<PathBuf>,
    /// When each path was created (a counter): a rewrite keeps its entry's place, a
    /// removal and re-creation makes it new, as on a real file system.
    created: HashMap<PathBuf, u64>,
    next: u64,
    order: ListingOrder,
    /// Directories listed in an order a test gave: these names first, in this order.
    listed_as: HashMap<PathBuf, Vec<CompactString>>,
}

impl Nodes {
    fn get(&self, path: &Path) -> Option<&Node> {
        self.by_path.get(path)
    }

    fn insert(&mut self, path: PathBuf, node: Node) {
        if self.by_path.insert(path.clone(), node).is_none() {
            self.next += 1;
            self.created.insert(path.clone(), self.next);
            self.sorted.insert(path);
        }
    }

    /// Adds `path` as a directory unless it exists.
    fn ensure_directory(&mut self, path: &Path) {
        if !self.by_path.contains_key(path) {
            self.insert(path.to_path_buf(), Node::Directory);
        }
    }

    /// Removes `path` and everything below it.
    fn remove_tree(&mut self, path: &Path) {
        let below: Vec<PathBuf> =
            self.sorted.range(path.to_path_buf()..).take_while(|p| p.starts_with(path)).cloned().collect();
        for p in below {
            self.sorted.remove(&p);
            self.created.remove(&p);
            self.by_path.remove(&p);
        }
    }
}

#[derive(Clone, Debug)]
enum Node {
    File { bytes: Vec<u8>, readable: bool },
    Directory,
    Symlink(PathBuf),
}

/// Symlink hops before a lookup fails with `ELOOP`, as on Linux.
const MAX_SYMLINK_HOPS: usize = 40;

impl MemorySystem {
    /// An empty file system: just the root directory.
    pub fn new() -> Self {
        let system = Self::default();
        system.write().insert(PathBuf::from("/"), Node::Directory);
        system
    }

    /// Writes a file, creating its parent directories.
    pub fn write_file(&self, path: impl AsRef<Path>, bytes: impl Into<Vec<u8>>) {
        let path = path.as_ref();
        self.create_dir_all(parent_or_root(path));
        self.write().insert(path.to_path_buf(), Node::File { bytes: bytes.into(), readable: true });
    }

    /// What `git init` leaves in `dir` that repository discovery (P5) looks at: a `.git`
    /// directory with `HEAD`, `objects/` and `refs/`.
    pub fn init_git_repo(&self, dir: impl AsRef<Path>) {
        let git = dir.as_ref().join(".git");
        self.write_file(git.join("HEAD"), "ref: refs/heads/main\n");
        self.create_dir_all(git.join("objects"));
        self.create_dir_all(git.join("refs"));
    }

    /// Creates a directory and its missing parents, like `mkdir -p`.
    pub fn create_dir_all(&self, path: impl AsRef<Path>) {
        let mut nodes = self.write();
        for ancestor in path.as_ref().ancestors() {
            nodes.ensure_directory(ancestor);
        }
    }

    /// Creates a symlink at `path` pointing to `target` (relative targets resolve against
    /// the link's directory, as on a real file system).
    pub fn symlink(&self, target: impl AsRef<Path>, path: impl AsRef<Path>) {
        let path = path.as_ref();
        self.create_dir_all(parent_or_root(path));
        self.write().insert(path.to_path_buf(), Node::Symlink(target.as_ref().to_path_buf()));
    }

    /// Makes reads of a file fail with `PermissionDenied`; it still exists.
    pub fn set_unreadable(&self, path: impl AsRef<Path>) {
        if let Some(Node::File { readable, .. }) = self.write().by_path.get_mut(path.as_ref()) {
            *readable = false;
        }
    }

    /// Lists every directory in `order` from now on (those given
    /// [`MemorySystem::set_listing`] excepted).
    pub fn set_listing_order(&self, order: ListingOrder) {
        self.write().order = order;
    }

    /// Lists `dir` with these names first, in this order (a listing captured on a real
    /// disk); entries not named follow in the [`ListingOrder`].
    pub fn set_listing<S: AsRef<str>>(&self, dir: impl AsRef<Path>, names: &[S]) {
        let names = names.iter().map(|n| CompactString::new(n.as_ref())).collect();
        self.write().listed_as.insert(dir.as_ref().to_path_buf(), names);
    }

    /// Deletes a path and everything below it, like `rm -r`.
    pub fn remove(&self, path: impl AsRef<Path>) {
        let path = path.as_ref();
        self.write().remove_tree(path);
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Nodes> {
        self.nodes.write().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn read_nodes(&self) -> std::sync::RwLockReadGuard<'_, Nodes> {
        self.nodes.read().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Resolves every symlink in `path`, like `realpath`.
    fn resolve(&self, path: &Path) -> io::Result<(PathBuf, Node)> {
        let nodes = self.read_nodes();
        let mut hops = 0;
        let mut pending: Vec<PathBuf> = Vec::new();
        let mut current = PathBuf::from("/");
        let owned: Vec<_> = path.components().map(|c| c.as_os_str().to_owned()).collect();
        for part in owned.iter().rev() {
            pending.push(PathBuf::from(part));
        }
        while let Some(part) = pending.pop() {
            match part.to_str() {
                Some("/" | ".") => continue,
                Some("..") => {
                    current.pop();
                    continue;
                }
                _ => {}
            }
            let next = current.join(&part);
            match nodes.get(&next) {
                None => return Err(io::ErrorKind::NotFound.into()),
                Some(Node::Symlink(target)) => {
                    hops += 1;
                    if hops > MAX_SYMLINK_HOPS {
                        return Err(io::Error::other("too many levels of symbolic links"));
                    }
                    if target.is_absolute() {
                        current = PathBuf::from("/");
                    }
                    for piece in target.components().rev() {
                        pending.push(PathBuf::from(piece.as_os_str()));
                    }
                }
                Some(Node::File { .. }) if !pending.is_empty() => {
                    return Err(io::ErrorKind::NotADirectory.into());
                }
                Some(_) => current = next,
            }
        }
        let node = nodes.get(&current).cloned().ok_or(io::ErrorKind::NotFound)?;
        Ok((current, node))
    }
}

fn parent_or_root(path: &Path) -> &Path {
    path.parent().unwrap_or(Path::new("/"))
}

impl System for MemorySystem {
    fn kind(&self, path: &Path) -> FileKind {
        match self.resolve(path) {
            Ok((_, Node::File { .. })) => FileKind::File,
            Ok((_, Node::Directory)) => FileKind::Directory,
            Ok((_, Node::Symlink(_))) => FileKind::Inaccessible,
            Err(err) => FileKind::from_io_error(&err),
        }
    }

    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        match self.resolve(path)? {
            (_, Node::File { bytes, readable: true }) => Ok(bytes),
            (_, Node::File { readable: false, .. }) => Err(io::ErrorKind::PermissionDenied.into()),
            (_, Node::Directory) => Err(io::ErrorKind::IsADirectory.into()),
            (_, Node::Symlink(_)) => Err(io::Error::other("unresolved symlink")),
        }
    }

    fn read_dir(&self, path: &Path) -> io::Result<Vec<DirEntry>> {
        let (real, node) = self.resolve(path)?;
        if !matches!(node, Node::Directory) {
            return Err(io::ErrorKind::NotADirectory.into());
        }
        let nodes = self.read_nodes();
        let mut entries: Vec<(u64, DirEntry)> = nodes
            .sorted
            .range(real.clone()..)
            .skip_while(|p| **p == real)
            .take_while(|p| p.starts_with(&real))
            .filter(|p| p.parent() == Some(real.as_path()))
            .filter_map(|p| {
                let node = nodes.get(p)?;
                let name = CompactString::new(p.file_name()?.to_str()?);
                let kind = match node {
                    Node::File { .. } => EntryKind::File,
                    Node::Directory => EntryKind::Directory,
                    Node::Symlink(_) => EntryKind::Symlink,
                };
                Some((nodes.created.get(p).copied().unwrap_or_default(), DirEntry { name, kind }))
            })
            .collect();
        match nodes.order {
            ListingOrder::NewestFirst => entries.sort_by_key(|(created, _)| std::cmp::Reverse(*created)),
            ListingOrder::OldestFirst => entries.sort_by_key(|(created, _)| *created),
            ListingOrder::ByName => {}
            ListingOrder::Hashed => entries.sort_by_key(|(_, entry)| name_hash(&entry.name)),
        }
        if let Some(names) = nodes.listed_as.get(&real) {
            let place = |entry: &DirEntry| names.iter().position(|n| *n == entry.name).unwrap_or(names.len());
            entries.sort_by_key(|(_, entry)| place(entry));
        }
        Ok(entries.into_iter().map(|(_, entry)| entry).collect())
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        self.resolve(path).map(|(real, _)| real)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symlinks_resolve_and_loops_fail() {
        let fs = MemorySystem::new();
        fs.write_file("/r/CLAUDE.md", "c");
        fs.symlink("CLAUDE.md", "/r/AGENTS.md");
        fs.symlink("b", "/r/a");
        fs.symlink("a", "/r/b");
        fs.symlink(".", "/r/loop");
        assert_eq!(fs.read(Path::new("/r/AGENTS.md")).unwrap(), b"c");
        assert_eq!(fs.kind(Path::new("/r/a")), FileKind::Inaccessible);
        assert_eq!(fs.kind(Path::new("/r/loop/loop/CLAUDE.md")), FileKind::File);
        assert_eq!(fs.canonicalize(Path::new("/r/loop/AGENTS.md")).unwrap(), Path::new("/r/CLAUDE.md"));
        fs.set_listing_order(ListingOrder::ByName);
        let names: Vec<_> = fs.read_dir(Path::new("/r")).unwrap().into_iter().map(|e| e.name).collect();
        assert_eq!(names, ["AGENTS.md", "CLAUDE.md", "a", "b", "loop"]);
    }

    fn listing(fs: &MemorySystem, dir: &str) -> Vec<String> {
        fs.read_dir(Path::new(dir)).unwrap().into_iter().map(|e| e.name.to_string()).collect()
    }

    #[test]
    fn listings_come_newest_first_unless_told_otherwise() {
        let fs = MemorySystem::new();
        for name in ["b.md", "c.md", "a.md"] {
            fs.write_file(format!("/r/{name}"), "x");
        }
        assert_eq!(listing(&fs, "/r"), ["a.md", "c.md", "b.md"]);
        // A rewrite keeps its place; a removal and re-creation is new again.
        fs.write_file("/r/c.md", "y");
        assert_eq!(listing(&fs, "/r"), ["a.md", "c.md", "b.md"]);
        fs.remove("/r/b.md");
        fs.write_file("/r/b.md", "z");
        assert_eq!(listing(&fs, "/r"), ["b.md", "a.md", "c.md"]);
        fs.set_listing_order(ListingOrder::OldestFirst);
        assert_eq!(listing(&fs, "/r"), ["c.md", "a.md", "b.md"]);
        fs.set_listing("/r", &["c.md", "b.md"]);
        assert_eq!(listing(&fs, "/r"), ["c.md", "b.md", "a.md"]);
        fs.set_listing_order(ListingOrder::ByName);
        assert_eq!(listing(&fs, "/"), ["r"]);
        fs.write_file("/h/a.md", "");
        fs.write_file("/h/b.md", "");
        fs.write_file("/h/c.md", "");
        fs.set_listing_order(ListingOrder::Hashed);
        let hashed = listing(&fs, "/h");
        assert_ne!(hashed, ["a.md", "b.md", "c.md"]);
        assert_ne!(hashed, ["c.md", "b.md", "a.md"]);
    }

    #[test]
    fn unreadable_files_exist_but_fail_to_read() {
        let fs = MemorySystem::new();
        fs.write_file("/r/AGENTS.md", "secret");
        fs.set_unreadable("/r/AGENTS.md");
        assert_eq!(fs.kind(Path::new("/r/AGENTS.md")), FileKind::File);
        assert_eq!(fs.read(Path::new("/r/AGENTS.md")).unwrap_err().kind(), io::ErrorKind::PermissionDenied);
        assert_eq!(fs.read(Path::new("/r")).unwrap_err().kind(), io::ErrorKind::IsADirectory);
    }
}
