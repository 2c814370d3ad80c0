//! The store's two ways of writing (memory.md §3.4), both under the cross-process lock:
//! appending one whole line to a JSONL log, and replacing a JSON file whole.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use fd_lock::RwLock;

use crate::StoreError;

/// How long a writer waits for another process's lock before failing. The spec drops the
/// write after 2 s; ctxgraph never drops a record, so it waits longer and then fails loudly.
pub const LOCK_WAIT: Duration = Duration::from_secs(30);
const LOCK_POLL: Duration = Duration::from_millis(2);

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> StoreError + '_ {
    move |source| StoreError::Io { path: path.to_path_buf(), source }
}

/// Runs `write` holding the exclusive lock on `<root>/.lock`.
///
/// An advisory `flock` (via `fd-lock`), not the spec's exclusive-create lock file: the OS
/// releases it when the holder dies, so a `kill -9` leaves no stale lock to steal and no
/// pid to check.
pub fn with_lock<T>(
    root: &Path,
    wait: Duration,
    write: impl FnOnce() -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    fs::create_dir_all(root).map_err(io_error(root))?;
    let path = root.join(ctxgraph_queries::memory::record::LOCK);
    let file =
        OpenOptions::new().create(true).truncate(false).write(true).open(&path).map_err(io_error(&path))?;
    let mut lock = RwLock::new(file);
    let started = Instant::now();
    let _guard = loop {
        match lock.try_write() {
            Ok(guard) => break guard,
            Err(err) if err.kind() == io::ErrorKind::WouldBlock => {
                if started.elapsed() >= wait {
                    return Err(StoreError::LockTimeout { path, waited: wait });
                }
                std::thread::sleep(LOCK_POLL);
            }
            Err(source) => return Err(StoreError::Io { path, source }),
        }
    };
    write()
}

/// Appends `line` (no newline in it) plus `\n` to `path` in one `write`, then syncs.
///
/// A final line without `\n` is a write that a crash cut short; it was never acknowledged,
/// so it is cut off first (readers skip it meanwhile). Call only under [`with_lock`].
pub fn append_line(path: &Path, line: &str, sync: bool) -> Result<(), StoreError> {
    debug_assert!(!line.contains('\n'));
    let mut file = OpenOptions::new()
        .create(true)
        .read(true)
        .write(true)
        .truncate(false)
        .open(path)
        .map_err(io_error(path))?;
    let len = file.metadata().map_err(io_error(path))?.len();
    let end = repair_torn_tail(&mut file, len).map_err(io_error(path))?;
    file.seek(SeekFrom::Start(end)).map_err(io_error(path))?;
    let mut bytes = Vec::with_capacity(line.len() + 1);
    bytes.extend_from_slice(line.as_bytes());
    bytes.push(b'\n');
    file.write_all(&bytes).map_err(io_error(path))?;
    if sync {
        file.sync_data().map_err(io_error(path))?;
    }
    Ok(())
}

/// Truncates a torn last line; returns the new length.
fn repair_torn_tail(file: &mut File, len: u64) -> io::Result<u64> {
    const CHUNK: u64 = 64 * 1024;
    if len == 0 {
        return Ok(0);
    }
    let mut last = [0u8; 1];
    file.seek(SeekFrom::Start(len - 1))?;
    file.read_exact(&mut last)?;
    if last[0] == b'\n' {
        return Ok(len);
    }
    // Scan back in chunks for the last complete line's newline.
    let mut end = len;
    while end > 0 {
        let start = end.saturating_sub(CHUNK);
        let mut buf = vec![0u8; usize::try_from(end - start).map_err(io::Error::other)?];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut buf)?;
        if let Some(at) = buf.iter().rposition(|&b| b == b'\n') {
            let keep = start + at as u64 + 1;
            file.set_len(keep)?;
            return Ok(keep);
        }
        end = start;
    }
    file.set_len(0)?;
    Ok(0)
}

/// Replaces `path` with `bytes`: a temp file in the same directory, fsync, rename, fsync
/// of the directory. Readers see the old file or the new one, never a mix.
pub fn replace_file(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let dir = path.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let mut temp = tempfile::Builder::new()
        .prefix(&format!(".{}.", path.file_name().and_then(|n| n.to_str()).unwrap_or("memory")))
        .suffix(".tmp")
        .tempfile_in(&dir)
        .map_err(io_error(&dir))?;
    temp.write_all(bytes).map_err(io_error(path))?;
    temp.as_file().sync_all().map_err(io_error(path))?;
    temp.persist(path).map_err(|e| StoreError::Io { path: path.to_path_buf(), source: e.error })?;
    // The rename is durable once the directory is synced (best effort where unsupported).
    if let Ok(dir) = File::open(&dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// The file's text, or `None` when it does not exist. Not UTF-8 is an error naming it.
pub fn read_text(path: &Path) -> Result<Option<String>, StoreError> {
    match fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes).map(Some).map_err(|e| StoreError::Corrupt {
            path: path.to_path_buf(),
            reason: format!("not UTF-8 at byte {}", e.utf8_error().valid_up_to()),
        }),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(StoreError::Io { path: path.to_path_buf(), source }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn append_repairs_a_torn_tail() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        fs::write(&path, "{\"a\":1}\n{\"b\":").unwrap();
        append_line(&path, "{\"c\":3}", true).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "{\"a\":1}\n{\"c\":3}\n");
        fs::write(&path, "torn").unwrap();
        append_line(&path, "x", true).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "x\n");
    }

    #[test]
    fn replace_leaves_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.json");
        replace_file(&path, b"1").unwrap();
        replace_file(&path, b"2").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "2");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_held_lock_times_out_loudly() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let err = with_lock(&root, LOCK_WAIT, || {
            // A second open of the lock file conflicts with the first, even in-process.
            with_lock(&root, Duration::from_millis(20), || Ok(()))
        })
        .unwrap_err();
        assert!(matches!(err, StoreError::LockTimeout { .. }), "{err}");
    }
}
