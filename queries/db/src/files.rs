//! Files as salsa inputs, the `ruff_db` way.
//!
//! Every absolute path a query asks about gets exactly one [`File`] input, created on first
//! lookup, *including paths that do not exist*: a query that saw "missing" depends on that
//! input and re-runs when the file appears. Content and directory listings are tracked
//! queries over the input, so the engine invalidates them by bumping `revision`.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use dashmap::DashMap;
use salsa::Durability;

use crate::Db;
use crate::path;
use crate::system::{DirEntry, EntryKind, FileKind};

pub use input::File;

// salsa's input macro generates public constructors (`new`, `builder`) that cannot carry
// doc comments; this module scopes the allowance to them.
#[allow(missing_docs)]
mod input {
    use std::path::Path;
    use std::sync::Arc;

    use crate::system::FileKind;

    /// One path some query looked at, existing or not: the unit of invalidation. Only the
    /// engine creates and sets these (through [`Files`](super::Files)).
    #[salsa::input(debug)]
    pub struct File {
        /// Absolute and lexically normalised; never changes for a given input. The same
        /// allocation as the key of [`Files`](super::Files)' table and of the engine's
        /// indexes: a large tree has tens of thousands of these.
        #[returns(ref)]
        pub path: Arc<Path>,
        /// What the path is, following symlinks.
        #[returns(copy)]
        pub kind: FileKind,
        /// Bumped by the engine whenever the content (or, for a directory, the listing) may
        /// have changed. Queries read it to depend on the content.
        #[returns(copy)]
        pub revision: u64,
        /// The text an editor holds for this path, unsaved: while set, it is the file's
        /// content and the disk is not read (the language server's open documents).
        #[default]
        #[returns(ref)]
        pub overlay: Option<Arc<[u8]>>,
    }
}

/// Which paths exist changes less often than what files say. With `kind` and directory
/// listings at MEDIUM durability and file contents at LOW, an edit to a rule file lets
/// salsa skip re-verifying every walk and glob (they only read MEDIUM fields): the next
/// build checks the content queries and the assembly, not the whole tree.
pub const KIND_DURABILITY: Durability = Durability::MEDIUM;

/// The durability of `revision` for a path of this kind (the engine sets it with it).
pub fn revision_durability(kind: FileKind) -> Durability {
    match kind {
        FileKind::Directory => Durability::MEDIUM,
        _ => Durability::LOW,
    }
}

/// The side table from paths to [`File`] inputs. Lives in the database, outside salsa.
///
/// Each path is allocated once, as an `Arc<Path>` shared by this table, the input's `path`
/// field and whatever index a reader of [`Files::created_since`] keeps.
#[derive(Debug, Default)]
pub struct Files {
    by_path: DashMap<Arc<Path>, File>,
    /// Every input in creation order, so the engine can index new paths without
    /// re-listing (and re-sorting) the whole table after each build. Ids only: a reader
    /// gets each path from its input.
    created: Mutex<Vec<File>>,
}

impl Files {
    /// The input for `path` (absolute), created with its current kind if it is new.
    pub fn get(&self, db: &dyn Db, path: &Path) -> File {
        self.get_or_create(db, path, |path| db.system().kind(path))
    }

    /// The input for `path`, an entry its parent's listing reported as `entry`. A plain
    /// file or directory takes its kind from the listing, so a walk over a new tree costs
    /// one `read_dir` per directory and no `stat`; symlinks and other entries are stat'ed
    /// (their kind follows the link).
    pub fn get_listed(&self, db: &dyn Db, path: &Path, entry: EntryKind) -> File {
        self.get_or_create(db, path, |path| match entry {
            EntryKind::File => FileKind::File,
            EntryKind::Directory => FileKind::Directory,
            EntryKind::Symlink | EntryKind::Other => db.system().kind(path),
        })
    }

    fn get_or_create(&self, db: &dyn Db, path: &Path, kind: impl FnOnce(&Path) -> FileKind) -> File {
        let path = path::normalize(path);
        if let Some(file) = self.by_path.get(path.as_path()) {
            return *file;
        }
        let path: Arc<Path> = Arc::from(path);
        *self.by_path.entry(path.clone()).or_insert_with(|| {
            let kind = kind(&path);
            let file = File::builder(path.clone(), kind, 0)
                .path_durability(Durability::NEVER_CHANGE)
                .kind_durability(KIND_DURABILITY)
                .revision_durability(revision_durability(kind))
                .new(db);
            self.created.lock().unwrap_or_else(PoisonError::into_inner).push(file);
            file
        })
    }

    /// The inputs created after the first `seen` ones, in creation order. A caller that
    /// keeps its own index passes the count it has seen so far, and keys it on each input's
    /// `path` (a reference count, not a copy).
    pub fn created_since(&self, seen: usize) -> Vec<File> {
        let created = self.created.lock().unwrap_or_else(PoisonError::into_inner);
        created.get(seen..).map(<[_]>::to_vec).unwrap_or_default()
    }

    /// How many inputs have been created: more than a reader has seen means news for it.
    pub fn created_count(&self) -> usize {
        self.created.lock().unwrap_or_else(PoisonError::into_inner).len()
    }

    /// The input for `path` if some query has asked about it.
    pub fn existing(&self, path: &Path) -> Option<File> {
        self.by_path.get(path::normalize(path).as_path()).map(|file| *file)
    }

    /// How many paths have an input (`serve`'s status reports it as `inputs`).
    pub fn len(&self) -> usize {
        self.by_path.len()
    }

    /// No query has asked about any path yet.
    pub fn is_empty(&self) -> bool {
        self.by_path.is_empty()
    }
}

/// Why reading a file produced no bytes. Kept as data: `explain` names the OS error.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ReadFailure {
    /// The path does not exist (or a component of it is not a directory).
    NotFound,
    /// The path is a directory: opencode's read-or-empty treats it as empty text.
    IsADirectory,
    /// The process may not open it; `explain` tells the user to fix the permissions.
    PermissionDenied,
    /// Over the engine's size limit; a hard error rather than "read as empty".
    TooLarge(String),
    /// Any other OS error, with its message (an I/O error, a FIFO the engine refused to
    /// open, …).
    Other(String),
}

impl ReadFailure {
    fn from_io(err: &io::Error) -> Self {
        match err.kind() {
            io::ErrorKind::NotFound => ReadFailure::NotFound,
            io::ErrorKind::IsADirectory => ReadFailure::IsADirectory,
            io::ErrorKind::PermissionDenied => ReadFailure::PermissionDenied,
            io::ErrorKind::FileTooLarge => ReadFailure::TooLarge(err.to_string()),
            _ => ReadFailure::Other(err.to_string()),
        }
    }
}

impl std::fmt::Display for ReadFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadFailure::NotFound => f.write_str("no such file"),
            ReadFailure::IsADirectory => f.write_str("is a directory"),
            ReadFailure::PermissionDenied => f.write_str("permission denied"),
            ReadFailure::TooLarge(message) | ReadFailure::Other(message) => f.write_str(message),
        }
    }
}

/// `path` with every symlink resolved, or as given when that fails (a dangling link is
/// judged by where it sits).
pub fn real_path(db: &dyn Db, path: &Path) -> PathBuf {
    real_path_of(db, db.files().get(db, path)).clone()
}

/// [`real_path`] as a query over the path's `File` input: it re-runs when the engine bumps
/// that input, which it does for a change to the path, to a symlink on the way, or to what
/// a symlink's target depends on (the watcher follows those), the same invalidation that
/// [`file_bytes`] relies on. Lint asks this for every rule file on each run: one `realpath`
/// per file per keystroke was a fifth of the language server's diagnostics.
#[salsa::tracked(returns(ref))]
fn real_path_of(db: &dyn Db, file: File) -> PathBuf {
    let _ = (file.revision(db), file.kind(db));
    let path = file.path(db);
    db.system().canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The raw bytes of a file: the editor's unsaved text when it holds one, else the disk's.
#[salsa::tracked(returns(ref), lru = 1024)]
pub fn file_bytes(db: &dyn Db, file: File) -> Result<Arc<[u8]>, ReadFailure> {
    let _ = file.revision(db);
    let kind = file.kind(db);
    // A buffer not saved yet may be a file the disk does not have at all; only a directory
    // at that path makes it no file.
    if let Some(text) = file.overlay(db)
        && kind != FileKind::Directory
    {
        return Ok(text.clone());
    }
    match kind {
        FileKind::Missing => return Err(ReadFailure::NotFound),
        FileKind::Directory => return Err(ReadFailure::IsADirectory),
        FileKind::File | FileKind::Other | FileKind::Inaccessible => {}
    }
    db.system().read(file.path(db)).map(Arc::from).map_err(|err| ReadFailure::from_io(&err))
}

/// F6: a file decoded the way `TextDecoder("utf-8")` does it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DecodedText {
    /// The decoded text, what opencode would have in its string.
    pub text: Arc<str>,
    /// A leading UTF-8 byte order mark was removed.
    pub had_bom: bool,
    /// Invalid sequences were replaced by U+FFFD.
    pub lossy: bool,
}

/// F6/I7: read-or-empty. Any read error gives empty text, and says why.
#[salsa::tracked(returns(ref))]
pub fn file_text(db: &dyn Db, file: File) -> Result<DecodedText, ReadFailure> {
    file_bytes(db, file).as_ref().map(|bytes| decode_utf8(bytes)).map_err(Clone::clone)
}

/// `TextDecoder("utf-8")`: strips one leading BOM and replaces each maximal invalid
/// subpart with U+FFFD (WHATWG and `from_utf8_lossy` agree on that).
pub fn decode_utf8(bytes: &[u8]) -> DecodedText {
    const BOM: &[u8] = b"\xEF\xBB\xBF";
    let (had_bom, bytes) = match bytes.strip_prefix(BOM) {
        Some(rest) => (true, rest),
        None => (false, bytes),
    };
    let decoded = String::from_utf8_lossy(bytes);
    let lossy = matches!(decoded, std::borrow::Cow::Owned(_));
    DecodedText { text: Arc::from(decoded.as_ref()), had_bom, lossy }
}

/// The entries of a directory in the file system's listing order (`readdir`'s, not sorted:
/// what an agent does with that order is its profile's business,
/// [`Listed`](crate::profile::Listed)).
/// Unreadable or missing directories list as empty (glob treats them so). The order is part
/// of the answer, so a rename or a new file that re-orders the listing re-runs what read it.
#[salsa::tracked(returns(ref))]
pub fn dir_listing(db: &dyn Db, dir: File) -> Arc<[DirEntry]> {
    let _ = dir.revision(db);
    if dir.kind(db) != FileKind::Directory {
        return Arc::from([]);
    }
    Arc::from(db.system().read_dir(dir.path(db)).unwrap_or_default())
}

/// [`dir_listing`] sorted by name (byte order): for the places an agent sorts itself, and
/// for the places whose order has not been captured from the agent yet.
pub fn dir_listing_by_name(db: &dyn Db, dir: File) -> Vec<DirEntry> {
    let mut entries = dir_listing(db, dir).to_vec();
    entries.sort();
    entries
}
