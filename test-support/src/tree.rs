//! Laying fixture trees out, in memory or on disk, with their symlinks.

use std::path::Path;

use ctxgraph_db::system::MemorySystem;

/// Where a tree is written.
pub trait TreeWriter {
    /// Creates a directory and its parents.
    fn dir(&mut self, path: &Path);
    /// Writes a file, creating its parent directories.
    fn file(&mut self, path: &Path, bytes: Vec<u8>);
    /// Creates a symlink at `path` to `target`, creating its parent directories.
    fn symlink(&mut self, target: &Path, path: &Path);
}

/// Writes into a [`MemorySystem`].
pub struct MemoryWriter<'a>(pub &'a MemorySystem);

impl TreeWriter for MemoryWriter<'_> {
    fn dir(&mut self, path: &Path) {
        self.0.create_dir_all(path);
    }
    fn file(&mut self, path: &Path, bytes: Vec<u8>) {
        self.0.write_file(path, bytes);
    }
    fn symlink(&mut self, target: &Path, path: &Path) {
        self.0.symlink(target, path);
    }
}

/// Writes to the real file system.
pub struct DiskWriter;

impl TreeWriter for DiskWriter {
    fn dir(&mut self, path: &Path) {
        std::fs::create_dir_all(path).unwrap_or_else(|err| panic!("create {}: {err}", path.display()));
    }
    fn file(&mut self, path: &Path, bytes: Vec<u8>) {
        self.dir(path.parent().expect("a file has a parent"));
        std::fs::write(path, bytes).unwrap_or_else(|err| panic!("write {}: {err}", path.display()));
    }
    fn symlink(&mut self, target: &Path, path: &Path) {
        self.dir(path.parent().expect("a link has a parent"));
        std::os::unix::fs::symlink(target, path)
            .unwrap_or_else(|err| panic!("symlink {}: {err}", path.display()));
    }
}

/// Makes `repo` a git worktree as far as discovery can tell (P5): what `git init` leaves
/// that git itself checks, `.git/HEAD`, `.git/objects/` and `.git/refs/`.
pub fn git_worktree(repo: &Path, out: &mut dyn TreeWriter) {
    let git = repo.join(".git");
    out.file(&git.join("HEAD"), b"ref: refs/heads/main\n".to_vec());
    out.dir(&git.join("objects"));
    out.dir(&git.join("refs"));
}

/// Copies the tree at `from` (files, directories, symlinks as symlinks) to `to`, exactly.
/// A missing `from` copies nothing.
pub fn copy_tree(from: &Path, to: &Path, out: &mut dyn TreeWriter) {
    copy(from, to, out, false);
}

/// [`copy_tree`] without the `.keep` files that hold empty directories in git, for
/// fixtures whose tests must not see them.
pub fn copy_tree_without_keep(from: &Path, to: &Path, out: &mut dyn TreeWriter) {
    copy(from, to, out, true);
}

/// [`copy_tree`] to the real file system.
pub fn copy_tree_to_disk(from: &Path, to: &Path) {
    copy_tree(from, to, &mut DiskWriter);
}

fn copy(from: &Path, to: &Path, out: &mut dyn TreeWriter, skip_keep: bool) {
    let Ok(entries) = std::fs::read_dir(from) else { return };
    out.dir(to);
    let mut entries: Vec<_> = entries.map(|e| e.expect("directory entry")).collect();
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        let (source, dest) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type().expect("file type");
        if kind.is_symlink() {
            out.symlink(&std::fs::read_link(&source).expect("read link"), &dest);
        } else if kind.is_dir() {
            copy(&source, &dest, out, skip_keep);
        } else if !(skip_keep && entry.file_name() == ".keep") {
            out.file(&dest, std::fs::read(&source).expect("read fixture file"));
        }
    }
}
