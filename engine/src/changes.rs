//! Turning file-system events into input updates: the only place `File` inputs change.
//!
//! The queries depend on two fields of a [`File`] input: `kind` (what the path is) and
//! `revision` (bumped when the content or, for a directory, the listing may differ). An
//! event re-stats the path and sets `kind` only when it differs (salsa setters always bump
//! the revision, so comparing first is what keeps unrelated queries from re-running). A
//! content event bumps `revision` without reading the file: if the bytes turn out equal,
//! `file_bytes` is backdated and nothing that read the text re-runs.
//!
//! A path that appears or disappears also changes its parent's listing, so the parent's
//! `revision` is bumped too (`ruff_db`'s `touch_parent_directory_after_sync`): exactly the
//! globs that listed that directory re-run, and nothing else.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ctxgraph_db::Db;
use ctxgraph_db::files::{File, KIND_DURABILITY, revision_durability};
use ctxgraph_db::path;
use ctxgraph_db::system::FileKind;
use salsa::Setter;

use crate::database::Database;
use crate::index::PathIndex;

/// One thing that happened on the file system, as a watcher (or a host that knows) reports it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ChangeEvent {
    /// A path appeared (file or directory).
    Created(PathBuf),
    /// A file's content or a path's metadata may have changed. If the path's existence
    /// changed too, this is handled like [`ChangeEvent::Created`] / [`ChangeEvent::Removed`].
    Modified(PathBuf),
    /// A path disappeared (a directory takes everything below it along).
    Removed(PathBuf),
    /// A path moved: `from` disappeared and `to` appeared.
    Renamed {
        /// The old path.
        from: PathBuf,
        /// The new path.
        to: PathBuf,
    },
    /// The watcher lost track (queue overflow, a failed watch): re-stat every known path.
    Rescan,
}

/// What applying a batch of changes did ([`Engine::apply_changes`](crate::Engine::apply_changes)),
/// for logs and tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Applied {
    /// `kind` fields set to a new value.
    pub kinds_changed: usize,
    /// `revision` fields bumped (content or listing may differ).
    pub revisions_bumped: usize,
    /// A rescan ran.
    pub rescanned: bool,
}

impl Applied {
    /// Some input may differ: a build could come out differently. Events only for paths no
    /// query has read change nothing, and need no rebuild.
    pub fn touched_inputs(&self) -> bool {
        self.kinds_changed > 0 || self.revisions_bumped > 0 || self.rescanned
    }

    /// The counts of two applications together.
    #[must_use]
    pub fn merge(self, other: Applied) -> Applied {
        Applied {
            kinds_changed: self.kinds_changed + other.kinds_changed,
            revisions_bumped: self.revisions_bumped + other.revisions_bumped,
            rescanned: self.rescanned || other.rescanned,
        }
    }
}

/// Applies a batch of events to the database's `File` inputs. Paths nobody has asked about
/// have no input and cost nothing.
pub fn apply(db: &mut Database, index: &mut PathIndex, changes: &[ChangeEvent]) -> Applied {
    index.catch_up(&*db);
    let mut sync = InputSync { db, index, applied: Applied::default() };
    if changes.contains(&ChangeEvent::Rescan) {
        sync.rescan();
        return sync.applied;
    }
    for change in changes {
        match change {
            ChangeEvent::Created(path) | ChangeEvent::Removed(path) => sync.existence(path),
            ChangeEvent::Modified(path) => sync.content(path),
            ChangeEvent::Renamed { from, to } => {
                sync.existence(from);
                sync.existence(to);
            }
            ChangeEvent::Rescan => unreachable!("handled above"),
        }
    }
    sync.applied
}

struct InputSync<'a> {
    db: &'a mut Database,
    index: &'a PathIndex,
    applied: Applied,
}

impl InputSync<'_> {
    fn input(&self, path: &Path) -> Option<File> {
        self.db.files().existing(path)
    }

    fn stat(&self, path: &Path) -> FileKind {
        self.db.system().kind(path)
    }

    /// Sets `kind` if it differs; returns the old and new kind.
    fn set_kind(&mut self, file: File, kind: FileKind) -> (FileKind, FileKind) {
        let old = file.kind(&*self.db);
        if old != kind {
            file.set_kind(self.db).with_durability(KIND_DURABILITY).to(kind);
            self.applied.kinds_changed += 1;
        }
        (old, kind)
    }

    fn bump(&mut self, file: File) {
        let revision = file.revision(&*self.db);
        let durability = revision_durability(file.kind(&*self.db));
        file.set_revision(self.db).with_durability(durability).to(revision.wrapping_add(1));
        self.applied.revisions_bumped += 1;
    }

    /// The content of `path` may differ. Its listing stays put unless its existence changed.
    fn content(&mut self, path: &Path) {
        let path = path::normalize(path);
        // Nobody read it. (Had it appeared or vanished, the event would say so.)
        let Some(file) = self.input(&path) else { return };
        let (old, new) = self.set_kind(file, self.stat(&path));
        if old != new {
            return self.existence_changed(&path, Some(old), new);
        }
        if new != FileKind::Missing {
            self.bump(file);
        }
    }

    /// `path` may have appeared or disappeared.
    fn existence(&mut self, path: &Path) {
        let path = path::normalize(path);
        let new = self.stat(&path);
        let old = match self.input(&path) {
            Some(file) => {
                let (old, new) = self.set_kind(file, new);
                if new != FileKind::Missing {
                    // Deleted and recreated within one batch: the kind is the same, the
                    // content need not be.
                    self.bump(file);
                }
                Some(old)
            }
            // No query asked about the path itself, but some may have asked about paths
            // below it (a renamed ancestor of the working directory, typically).
            None => None,
        };
        self.existence_changed(&path, old, new);
    }

    /// `old` is `None` when the path had no input: what it was is unknown.
    fn existence_changed(&mut self, path: &Path, old: Option<FileKind>, new: FileKind) {
        self.touch_parent(path);
        // A directory that came or went takes the paths below it along.
        if old.is_none_or(|old| old == FileKind::Directory) || new == FileKind::Directory {
            self.descendants(path);
        }
    }

    fn touch_parent(&mut self, path: &Path) {
        let Some(parent_path) = path.parent() else { return };
        let Some(parent) = self.input(parent_path) else { return };
        let (old, new) = self.set_kind(parent, self.stat(parent_path));
        self.bump(parent);
        if old != new {
            // The parent itself came or went (a file in a directory renamed away, seen
            // before the directory's own event): what is below it went along.
            self.existence_changed(parent_path, Some(old), new);
        }
    }

    /// Re-stats every known path strictly below `dir` and bumps every one that exists: a
    /// directory that came, went or was replaced (a rename over it, a symlink re-pointed)
    /// may hold different files under the same names.
    fn descendants(&mut self, dir: &Path) {
        let below: Vec<(Arc<Path>, File)> =
            self.index.subtree(dir).filter(|(p, _)| ***p != *dir).map(|(p, f)| (p.clone(), *f)).collect();
        for (path, file) in below {
            let (_, new) = self.set_kind(file, self.stat(&path));
            if new != FileKind::Missing {
                self.bump(file);
            }
        }
    }

    /// Every known path: re-stat, and bump the revision of everything that exists (the
    /// content queries re-read, and are backdated where nothing changed).
    fn rescan(&mut self) {
        self.applied.rescanned = true;
        let all: Vec<(Arc<Path>, File)> = self.index.iter().map(|(p, f)| (p.clone(), *f)).collect();
        for (path, file) in all {
            let (_, new) = self.set_kind(file, self.stat(&path));
            if new != FileKind::Missing {
                self.bump(file);
            }
        }
    }
}

/// Sets the editor's text for `path` (absolute), or clears it with `None`: while set, every
/// query reads that text instead of the disk. Compares first, so the same text twice (a
/// client resending a buffer) invalidates nothing. Returns whether the input changed.
pub fn set_overlay(db: &mut Database, path: &Path, text: Option<&str>) -> bool {
    let file = match (db.files().existing(path), text) {
        (Some(file), _) => file,
        // Nothing read this path and nothing overlays it: there is nothing to clear.
        (None, None) => return false,
        (None, Some(_)) => db.files().get(&*db, path),
    };
    let current = file.overlay(&*db).as_deref();
    if current == text.map(str::as_bytes) {
        return false;
    }
    let bytes: Option<Arc<[u8]>> = text.map(|text| Arc::from(text.as_bytes()));
    // LOW, as a file's content: an edit does not make salsa re-verify every walk and glob.
    file.set_overlay(db).with_durability(salsa::Durability::LOW).to(bytes);
    true
}
