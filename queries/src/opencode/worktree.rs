//! P5: the worktree `W` that bounds every upward walk.

use std::path::{Path, PathBuf};

use crate::db::{Db, Workspace};
use crate::files::{File, file_text};
use crate::system::FileKind;

/// The repository a working directory belongs to, found as opencode finds it (a `.git` entry
/// above the directory).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Worktree {
    /// The git toplevel, or `/` outside git (literally, as opencode does).
    pub root: PathBuf,
    /// The `.git` entry that made this a repository.
    pub git_entry: Option<PathBuf>,
}

impl Worktree {
    /// Whether a `.git` entry was found, as opposed to the `/` fallback.
    pub fn is_git(&self) -> bool {
        self.git_entry.is_some()
    }
}

/// P5: walks up from `D` without a stop to the first `.git` entry; its parent is the
/// toplevel, so nested repositories, submodules and linked worktrees bound at themselves.
///
/// opencode then asks `git rev-parse`; we do not run git. Instead the entry must look
/// like a repository to git: a directory with a `HEAD`, or a file starting `gitdir:`.
#[salsa::tracked(returns(ref))]
pub fn worktree(db: &dyn Db, ws: Workspace) -> Worktree {
    for dir in ws.cwd(db).ancestors() {
        let entry = dir.join(".git");
        let git = db.files().get(db, &entry);
        match git.kind(db) {
            FileKind::Missing | FileKind::Inaccessible => continue,
            _ if looks_like_git(db, git, &entry) => {
                return Worktree { root: dir.to_path_buf(), git_entry: Some(entry) };
            }
            _ => break,
        }
    }
    Worktree { root: PathBuf::from("/"), git_entry: None }
}

fn looks_like_git(db: &dyn Db, git: File, entry: &Path) -> bool {
    match git.kind(db) {
        FileKind::Directory => db.files().get(db, &entry.join("HEAD")).kind(db) == FileKind::File,
        FileKind::File => {
            file_text(db, git).as_ref().is_ok_and(|decoded| decoded.text.starts_with("gitdir:"))
        }
        _ => false,
    }
}
