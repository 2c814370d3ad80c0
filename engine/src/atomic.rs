//! Files ctxgraph writes (snapshots, the remote cache) are written whole or not at all:
//! into a temporary file in the same directory, synced, then renamed over the target.
//!
//! A process killed between the two steps leaves its temporary file behind. Ours carry a
//! recognisable prefix, so a later run can remove the ones old enough that no live
//! writer can still own them ([`sweep`]); files of other programs are never touched.

use std::io::{self, Write};
use std::path::Path;
use std::time::{Duration, SystemTime};

/// The name prefix of every temporary file ctxgraph creates.
pub const TEMP_PREFIX: &str = ".ctxgraph-tmp-";

/// A temporary file this old was left by a process that died: writing one takes
/// milliseconds, so an hour leaves any live writer plenty of room.
pub const STALE_AFTER: Duration = Duration::from_secs(60 * 60);

/// Who may read the written file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Like any file the user creates: mode 0666 minus the umask (snapshots are committed
    /// and read by other tools).
    Umask,
    /// The owner only (0600): the remote cache records URLs, which may carry tokens.
    Private,
}

/// Writes `bytes` to `path` atomically, creating its directory.
pub fn write(path: &Path, bytes: &[u8], access: Access) -> io::Result<()> {
    let dir =
        path.parent().ok_or_else(|| io::Error::other(format!("{} has no directory", path.display())))?;
    std::fs::create_dir_all(dir)?;
    let mut builder = tempfile::Builder::new();
    builder.prefix(TEMP_PREFIX);
    #[cfg(unix)]
    if access == Access::Umask {
        use std::os::unix::fs::PermissionsExt;
        // Passed to open(2), which applies the umask.
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut temp = builder.tempfile_in(dir)?;
    temp.write_all(bytes)?;
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|err| err.error)?;
    Ok(())
}

/// Removes the temporary files ctxgraph left in `dir` (not below it) that are older than
/// [`STALE_AFTER`], and returns how many it removed. A directory that does not exist has
/// none; anything that cannot be inspected or removed is left alone.
pub fn sweep(dir: &Path) -> usize {
    let now = SystemTime::now();
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    let mut removed = 0;
    for entry in entries.flatten() {
        if !entry.file_name().to_string_lossy().starts_with(TEMP_PREFIX) {
            continue;
        }
        // `DirEntry::metadata` does not follow symlinks: only regular files of ours.
        let Ok(meta) = entry.metadata() else { continue };
        let stale =
            meta.modified().ok().and_then(|m| now.duration_since(m).ok()).is_some_and(|d| d >= STALE_AFTER);
        if meta.is_file() && stale && std::fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn age(path: &Path, by: Duration) {
        let file = std::fs::File::options().write(true).open(path).expect("open");
        file.set_modified(SystemTime::now() - by).expect("set mtime");
    }

    #[test]
    fn sweeps_only_our_stale_temporary_files() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = |name: &str| dir.path().join(name);
        for name in [".ctxgraph-tmp-old", ".ctxgraph-tmp-fresh", ".tmpOTHER", "a.snap"] {
            std::fs::write(path(name), "x").expect("write");
        }
        for name in [".ctxgraph-tmp-old", ".tmpOTHER", "a.snap"] {
            age(&path(name), STALE_AFTER + Duration::from_secs(60));
        }
        std::fs::create_dir(path(".ctxgraph-tmp-dir")).expect("dir");

        assert_eq!(sweep(dir.path()), 1);
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .expect("list")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, [".ctxgraph-tmp-dir", ".ctxgraph-tmp-fresh", ".tmpOTHER", "a.snap"]);
        assert_eq!(sweep(&dir.path().join("absent")), 0);
    }

    #[cfg(unix)]
    #[test]
    fn written_files_follow_the_umask_or_stay_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("temp dir");
        let mode = |name: &str| {
            std::fs::metadata(dir.path().join(name)).expect("metadata").permissions().mode() & 0o777
        };
        write(&dir.path().join("shared"), b"a", Access::Umask).expect("write");
        write(&dir.path().join("private"), b"b", Access::Private).expect("write");
        // What the umask lets a freshly created file have.
        std::fs::write(dir.path().join("plain"), b"c").expect("write");
        assert_eq!(mode("shared"), mode("plain"));
        assert_eq!(mode("private"), 0o600);
        assert_eq!(std::fs::read(dir.path().join("shared")).expect("read"), b"a");
    }
}
