//! P5: the worktree `W` that bounds every upward walk.

use std::path::{Path, PathBuf};

use crate::files::{File, file_text};
use crate::system::FileKind;
use crate::{Db, Workspace};

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

/// P5: walks up from `D` without a stop to the first `.git` entry that git accepts; its
/// parent is the toplevel, so nested repositories, submodules and linked worktrees bound at
/// themselves.
///
/// opencode asks `git rev-parse` in the first `.git` entry's parent; we do not run git but
/// discover as git does. A `.git` directory is a repository only with a `HEAD` file and
/// `objects/` and `refs/` directories; one without them is skipped and git keeps walking up
/// (the oracle: a `.git` holding only `HEAD` below a real repository bounds at that
/// repository, and outside one there is no repository at all). A `.git` file must start
/// `gitdir:`; any other file makes git fail, so there is no repository.
#[salsa::tracked(returns(ref))]
pub fn worktree(db: &dyn Db, ws: Workspace) -> Worktree {
    for dir in ws.cwd(db).ancestors() {
        let entry = dir.join(".git");
        let git = db.files().get(db, &entry);
        match git.kind(db) {
            FileKind::Missing | FileKind::Inaccessible => continue,
            FileKind::Directory if !is_git_directory(db, &entry) => continue,
            FileKind::Directory => return Worktree { root: dir.to_path_buf(), git_entry: Some(entry) },
            FileKind::File if is_gitfile(db, git) => {
                return Worktree { root: dir.to_path_buf(), git_entry: Some(entry) };
            }
            _ => break,
        }
    }
    Worktree { root: PathBuf::from("/"), git_entry: None }
}

/// git's `is_git_directory`, as far as the file system shows it: `HEAD`, `objects/`, `refs/`.
fn is_git_directory(db: &dyn Db, entry: &Path) -> bool {
    let kind = |name: &str| db.files().get(db, &entry.join(name)).kind(db);
    kind("HEAD") == FileKind::File
        && kind("objects") == FileKind::Directory
        && kind("refs") == FileKind::Directory
}

/// A `.git` file naming the real git directory (linked worktrees, submodules).
fn is_gitfile(db: &dyn Db, git: File) -> bool {
    file_text(db, git).as_ref().is_ok_and(|decoded| decoded.text.starts_with("gitdir:"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Host;
    use crate::system::MemorySystem;
    use crate::testing::TestDb;

    fn worktree_of(fs: MemorySystem, cwd: &str) -> Worktree {
        let db = TestDb::new(fs);
        let host = Host::new(
            &db,
            std::collections::BTreeMap::default(),
            "/home".into(),
            "linux".into(),
            String::new(),
        );
        let ws = Workspace::new(&db, host, cwd.into());
        worktree(&db, ws).clone()
    }

    #[test]
    fn a_git_directory_needs_head_objects_and_refs() {
        let fs = MemorySystem::new();
        fs.init_git_repo("/r");
        fs.create_dir_all("/r/a");
        assert_eq!(worktree_of(fs, "/r/a").root, Path::new("/r"));
    }

    #[test]
    fn a_git_directory_with_only_head_is_skipped() {
        let fs = MemorySystem::new();
        fs.write_file("/r/.git/HEAD", "ref: refs/heads/main\n");
        fs.create_dir_all("/r/a");
        assert!(!worktree_of(fs, "/r/a").is_git());

        let fs = MemorySystem::new();
        fs.init_git_repo("/outer");
        fs.write_file("/outer/inner/.git/HEAD", "ref: refs/heads/main\n");
        assert_eq!(worktree_of(fs, "/outer/inner").root, Path::new("/outer"));
    }

    #[test]
    fn a_git_file_must_name_a_gitdir() {
        let fs = MemorySystem::new();
        fs.write_file("/w/.git", "gitdir: /r/.git/worktrees/w\n");
        assert_eq!(worktree_of(fs, "/w").root, Path::new("/w"));

        let fs = MemorySystem::new();
        fs.init_git_repo("/outer");
        fs.write_file("/outer/w/.git", "not a gitfile\n");
        assert!(!worktree_of(fs, "/outer/w").is_git(), "git fails on an invalid gitfile");
    }
}
