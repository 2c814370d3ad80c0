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
//! `revision` is bumped too (ruff_db's `touch_parent_directory_after_sync`): exactly the
//! globs that listed that directory re-run, and nothing else.

use std::path::{Path, PathBuf};

use ctxgraph_queries::Db;
use ctxgraph_queries::files::{File, KIND_DURABILITY, revision_durability};
use ctxgraph_queries::path;
use ctxgraph_queries::system::FileKind;
use salsa::Setter;

use crate::database::Database;

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

/// What [`apply`] did, for logs and tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Applied {
    /// `kind` fields set to a new value.
    pub kinds_changed: usize,
    /// `revision` fields bumped (content or listing may differ).
    pub revisions_bumped: usize,
    /// A rescan ran.
    pub rescanned: bool,
}

/// Applies a batch of events to the database's `File` inputs. Paths nobody has asked about
/// have no input and cost nothing.
pub fn apply(db: &mut Database, changes: &[ChangeEvent]) -> Applied {
    let mut sync = InputSync { db, applied: Applied::default() };
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
            return self.existence_changed(&path, old, new);
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
                old
            }
            None => new,
        };
        self.existence_changed(&path, old, new);
    }

    fn existence_changed(&mut self, path: &Path, old: FileKind, new: FileKind) {
        self.touch_parent(path);
        // A directory that came or went takes the paths below it along.
        if old == FileKind::Directory || new == FileKind::Directory {
            self.descendants(path);
        }
    }

    fn touch_parent(&mut self, path: &Path) {
        let Some(parent) = path.parent().and_then(|parent| self.input(parent)) else { return };
        let kind = self.stat(parent.path(&*self.db));
        self.set_kind(parent, kind);
        self.bump(parent);
    }

    /// Re-stats every known path strictly below `dir`.
    fn descendants(&mut self, dir: &Path) {
        let below: Vec<_> =
            self.db.files().paths().into_iter().filter(|(p, _)| p != dir && p.starts_with(dir)).collect();
        for (path, file) in below {
            let (old, new) = self.set_kind(file, self.stat(&path));
            if old != new || new == FileKind::Directory {
                self.bump(file);
            }
        }
    }

    /// Every known path: re-stat, and bump the revision of everything that exists (the
    /// content queries re-read, and are backdated where nothing changed).
    fn rescan(&mut self) {
        self.applied.rescanned = true;
        for (path, file) in self.db.files().paths() {
            let (_, new) = self.set_kind(file, self.stat(&path));
            if new != FileKind::Missing {
                self.bump(file);
            }
        }
    }
}
