//! The store's two ways of writing (docs/memory.md §3.4), both under the cross-process lock:
//! appending one whole line to a JSONL log, and replacing a JSON file whole.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use fd_lock::RwLock;

use crate::record;

use crate::StoreError;

/// How long a writer waits for another process's lock before failing. The spec drops the
/// write after 2 s; ctxgraph never drops a record, so it waits longer and then fails loudly.
pub const LOCK_WAIT: Duration = Duration::from_secs(30);
/// A waiting writer tries the lock again after `LOCK_POLL_FIRST`, then twice as long each
/// time up to `LOCK_POLL`. (flock has no timed wait, so a bounded wait polls.) A fixed 2 ms
/// poll left the lock idle between writes: eight debug-build processes appending a thousand
/// records each took 8.8 s, 6.2 s with the backoff.
const LOCK_POLL_FIRST: Duration = Duration::from_micros(50);
const LOCK_POLL: Duration = Duration::from_millis(2);

/// The largest store file read or written: the engine's limit for any file it reads,
/// so the writer and recall agree on what is readable.
pub const MAX_FILE_BYTES: u64 = record::MAX_FILE_BYTES;

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> StoreError + '_ {
    move |source| StoreError::Io { path: path.to_path_buf(), source }
}

fn unusable(path: &Path, reason: impl Into<String>) -> StoreError {
    StoreError::Unusable { path: path.to_path_buf(), reason: reason.into() }
}

/// An error opening a store file: the ones the user can fix (a directory in the way, no
/// permission, a FIFO with no reader) are bad input, the rest a failure of the machine.
fn open_error(path: &Path, err: io::Error) -> StoreError {
    match err.kind() {
        io::ErrorKind::PermissionDenied
        | io::ErrorKind::IsADirectory
        | io::ErrorKind::NotADirectory
        | io::ErrorKind::InvalidInput => unusable(path, err.to_string()),
        // A FIFO opened for writing without blocking, with no reader.
        #[cfg(unix)]
        _ if err.raw_os_error() == Some(libc::ENXIO) => {
            unusable(path, "is a FIFO (named pipe), not a regular file")
        }
        _ => StoreError::Io { path: path.to_path_buf(), source: err },
    }
}

/// Opens `path` with `options` without ever waiting on it, and checks that what was opened
/// is a regular file no larger than [`MAX_FILE_BYTES`]; returns it and its length.
///
/// Opening a FIFO blocks until the other end appears and a device can stream forever, so
/// the path is opened with `O_NONBLOCK` (no effect on a regular file) and the *opened*
/// handle is checked: a swap between a check and the open cannot slip one through.
fn open_regular(path: &Path, options: &mut OpenOptions) -> Result<Option<(File, u64)>, StoreError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let file = match options.open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(open_error(path, err)),
    };
    let meta = file.metadata().map_err(io_error(path))?;
    if meta.is_dir() {
        return Err(unusable(path, "is a directory, not a regular file"));
    }
    if !meta.is_file() {
        return Err(unusable(path, format!("{}, not a regular file", describe_special(meta.file_type()))));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(too_large(path, meta.len()));
    }
    Ok(Some((file, meta.len())))
}

fn too_large(path: &Path, len: u64) -> StoreError {
    unusable(
        path,
        format!(
            "is {len} bytes, over the memory store's limit of {MAX_FILE_BYTES} bytes (64 MiB); move it aside or cut it down"
        ),
    )
}

/// What a path that is neither a regular file nor a directory is, in words.
fn describe_special(file_type: fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "is a FIFO (named pipe)";
        }
        if file_type.is_socket() {
            return "is a socket";
        }
        if file_type.is_char_device() || file_type.is_block_device() {
            return "is a device";
        }
    }
    let _ = file_type;
    "is not a regular file"
}

/// The whole file, or `None` when it does not exist. Only a regular file within
/// [`MAX_FILE_BYTES`] is read, and never more than that (it may grow while read).
pub fn read_bytes(path: &Path) -> Result<Option<Vec<u8>>, StoreError> {
    let Some((file, len)) = open_regular(path, OpenOptions::new().read(true))? else { return Ok(None) };
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or_default());
    file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes).map_err(|e| open_error(path, e))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large(path, bytes.len() as u64));
    }
    Ok(Some(bytes))
}

/// Refuses a write to `path` that would land outside `workspace`: through a symlink (the
/// file's, or one of its directories') that points out of it. Writes only ever go where
/// the workspace's own store is.
pub fn check_inside(workspace: &Path, path: &Path) -> Result<(), StoreError> {
    let root = fs::canonicalize(workspace).map_err(io_error(workspace))?;
    // The nearest part of `path` that exists, resolved: the file (a link is followed), or
    // the directory it is to be created in.
    let mut existing = path;
    // Another writer may create the store's directory between the two looks below (two
    // sessions remembering at once): a path that is there after all, and no link, is looked
    // at again, a bounded number of times.
    let mut appeared = 0;
    let resolved = loop {
        match fs::canonicalize(existing) {
            Ok(real) => break real,
            Err(err) if err.kind() == io::ErrorKind::NotFound => match fs::symlink_metadata(existing) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    return Err(unusable(
                        existing,
                        "is a dangling symbolic link; the memory store writes only regular files inside the workspace",
                    ));
                }
                Ok(_) if appeared >= 3 => {
                    return Err(unusable(
                        existing,
                        "keeps appearing and disappearing while the store looks at it",
                    ));
                }
                Ok(_) => appeared += 1,
                Err(_) => {
                    existing =
                        existing.parent().ok_or_else(|| unusable(path, "has no existing directory"))?;
                }
            },
            Err(err) => return Err(open_error(existing, err)),
        }
    };
    if resolved.starts_with(&root) {
        Ok(())
    } else {
        Err(unusable(
            existing,
            format!(
                "leads to {} (through a symbolic link), outside the workspace {}; the memory store writes only inside it",
                resolved.display(),
                root.display()
            ),
        ))
    }
}

/// Runs `write` holding the exclusive lock on `<root>/.lock`, after checking that the
/// store's directory is inside `workspace` and removing temporary files a killed writer
/// left behind.
///
/// An advisory `flock` (via `fd-lock`), not the spec's exclusive-create lock file: the OS
/// releases it when the holder dies, so a `kill -9` leaves no stale lock to steal and no
/// pid to check.
pub fn with_lock<T>(
    workspace: &Path,
    root: &Path,
    wait: Duration,
    write: impl FnOnce() -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    check_inside(workspace, root)?;
    fs::create_dir_all(root).map_err(|e| open_error(root, e))?;
    let path = root.join(record::LOCK);
    check_inside(workspace, &path)?;
    let (file, _) = open_regular(&path, OpenOptions::new().create(true).truncate(false).write(true))?
        .ok_or_else(|| unusable(&path, "vanished while it was opened"))?;
    let mut lock = RwLock::new(file);
    let started = Instant::now();
    let mut poll = LOCK_POLL_FIRST;
    let _guard = loop {
        match lock.try_write() {
            Ok(guard) => break guard,
            Err(err) if err.kind() == io::ErrorKind::WouldBlock => {
                if started.elapsed() >= wait {
                    return Err(StoreError::LockTimeout { path, waited: wait });
                }
                std::thread::sleep(poll);
                poll = (poll * 2).min(LOCK_POLL);
            }
            Err(source) => return Err(StoreError::Io { path, source }),
        }
    };
    sweep_temp_files(root);
    write()
}

/// The name of a temporary file [`replace_file`] writes for `name`: `.<name>.<random>.tmp`.
fn is_temp_file(name: &str) -> bool {
    // tempfile names exactly: our prefix and suffix, in this case.
    let Some(middle) = name.strip_prefix('.').and_then(|n| n.strip_suffix(".tmp")) else { return false };
    [
        record::FACTS,
        record::HANDOFF,
        record::TOOL_STATS,
        record::OBSERVATION_HASHES,
        record::OBSERVATIONS,
        record::SESSIONS,
    ]
    .iter()
    .any(|file| middle.strip_prefix(file).is_some_and(|random| random.starts_with('.')))
}

/// Removes the temporary files of [`replace_file`] in `root`. Called holding the lock, and
/// every writer writes only holding it, so none of them belongs to a live writer: each is
/// what a writer killed between its write and its rename left. Best effort: one that
/// cannot be removed is left for the next write.
fn sweep_temp_files(root: &Path) {
    let Ok(entries) = fs::read_dir(root) else { return };
    for entry in entries.flatten() {
        let is_ours = entry.file_name().to_str().is_some_and(is_temp_file);
        // `DirEntry::file_type` does not follow links: only regular files are removed.
        if is_ours && entry.file_type().is_ok_and(|t| t.is_file()) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Appends `lines` (no newline in any), each plus `\n`, to `path` in one `write`, then syncs.
///
/// Whole or nothing: when the write or the sync fails (a full disk, a file size limit), the
/// file is cut back to its length before, so a failed call stored none of the lines and a
/// caller that retries stores them once. (A crash in the middle can still leave the first
/// lines; the torn last one is cut off by the next append.)
///
/// A final line without `\n` is a write that a crash cut short; it was never acknowledged,
/// so it is cut off first (readers skip it meanwhile). A file the lines would take past
/// [`MAX_FILE_BYTES`] is refused (the caller compacts first). Call only under [`with_lock`].
pub fn append_lines(workspace: &Path, path: &Path, lines: &[&str], sync: bool) -> Result<(), StoreError> {
    debug_assert!(lines.iter().all(|line| !line.contains('\n')));
    check_inside(workspace, path)?;
    let (mut file, len) =
        open_regular(path, OpenOptions::new().create(true).read(true).write(true).truncate(false))?
            .ok_or_else(|| unusable(path, "vanished while it was opened"))?;
    let end = repair_torn_tail(&mut file, len).map_err(io_error(path))?;
    let mut bytes = Vec::with_capacity(lines.iter().map(|line| line.len() + 1).sum());
    for line in lines {
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
    }
    let grown = end + bytes.len() as u64;
    if grown > MAX_FILE_BYTES {
        return Err(unusable(
            path,
            format!(
                "{} more line{} would take it to {grown} bytes, over the memory store's limit of {MAX_FILE_BYTES} bytes (64 MiB)",
                lines.len(),
                if lines.len() == 1 { "" } else { "s" }
            ),
        ));
    }
    let written = file
        .seek(SeekFrom::Start(end))
        .and_then(|_| file.write_all(&bytes))
        .and_then(|()| if sync { file.sync_data() } else { Ok(()) });
    if let Err(err) = written {
        // Shrinking needs no space: what was written of the lines goes again.
        let _ = file.set_len(end);
        return Err(StoreError::Io { path: path.to_path_buf(), source: err });
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
/// of the directory. Readers see the old file or the new one, never a mix. The rename
/// replaces a link rather than writing through it; the directory must be the workspace's.
///
/// The new file keeps the old one's mode, and its owner and group where this process may
/// set them (a root process keeps a user's file theirs); a file that did not exist gets
/// the mode any new file gets (0666 less the umask), not the temp file's owner-only 0600.
pub fn replace_file(workspace: &Path, path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let dir = path.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    check_inside(workspace, &dir)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large(path, bytes.len() as u64));
    }
    let prefix = format!(".{}.", path.file_name().and_then(|n| n.to_str()).unwrap_or("memory"));
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // Created with 0666, the umask applies as to any new file.
        builder.permissions(fs::Permissions::from_mode(0o666));
    }
    let mut temp = builder.tempfile_in(&dir).map_err(io_error(&dir))?;
    #[cfg(unix)]
    keep_mode_and_owner(temp.as_file(), path).map_err(io_error(path))?;
    temp.write_all(bytes).map_err(io_error(path))?;
    temp.as_file().sync_all().map_err(io_error(path))?;
    temp.persist(path).map_err(|e| StoreError::Io { path: path.to_path_buf(), source: e.error })?;
    // The rename is durable once the directory is synced (best effort where unsupported).
    if let Ok(dir) = File::open(&dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// Gives `temp` the mode of the file at `path`, and its owner and group as far as this
/// process may (a refused change of owner is no error: the file stays this user's).
#[cfg(unix)]
fn keep_mode_and_owner(temp: &File, path: &Path) -> io::Result<()> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let Ok(old) = fs::metadata(path) else { return Ok(()) };
    if !old.is_file() {
        return Ok(());
    }
    let ours = temp.metadata()?;
    if (ours.uid(), ours.gid()) != (old.uid(), old.gid()) {
        let _ = std::os::unix::fs::fchown(temp, Some(old.uid()), Some(old.gid()));
    }
    // After the owner: a change of owner may clear the set-id bits.
    temp.set_permissions(fs::Permissions::from_mode(old.mode() & 0o7777))
}

/// A JSON file's text, or `None` when it does not exist. Not UTF-8 is an error naming it
/// (a JSON file is replaced whole, so it is never torn).
pub fn read_text(path: &Path) -> Result<Option<String>, StoreError> {
    let Some(bytes) = read_bytes(path)? else { return Ok(None) };
    String::from_utf8(bytes).map(Some).map_err(|e| StoreError::Corrupt {
        path: path.to_path_buf(),
        reason: format!("not UTF-8 at byte {}", e.utf8_error().valid_up_to()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A dangling link on the way is refused; a path made of directories that do not exist
    /// yet (a store not written before, another writer about to create it) is inside.
    #[test]
    fn check_inside_refuses_only_a_dangling_link() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = fs::canonicalize(dir.path()).unwrap();
        let store = workspace.join(".opencode/memory/facts.jsonl");
        assert!(check_inside(&workspace, &store).is_ok());
        fs::create_dir_all(workspace.join(".opencode")).unwrap();
        assert!(check_inside(&workspace, &store).is_ok());
        std::os::unix::fs::symlink(workspace.join("nowhere"), workspace.join(".opencode/memory")).unwrap();
        let refused = check_inside(&workspace, &store).unwrap_err().to_string();
        assert!(refused.contains("dangling symbolic link"), "{refused}");
    }

    #[test]
    fn append_repairs_a_torn_tail() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path();
        let path = ws.join("log.jsonl");
        fs::write(&path, "{\"a\":1}\n{\"b\":").unwrap();
        append_lines(ws, &path, &["{\"c\":3}"], true).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "{\"a\":1}\n{\"c\":3}\n");
        fs::write(&path, "torn").unwrap();
        append_lines(ws, &path, &["x"], true).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "x\n");
        // A last line cut inside a character (a full disk) is torn like any other.
        let mut cut = b"{\"a\":1}\n{\"text\":\"caf".to_vec();
        cut.push(0xC3);
        fs::write(&path, cut).unwrap();
        append_lines(ws, &path, &["y"], true).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "{\"a\":1}\ny\n");
    }

    #[test]
    fn replace_leaves_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.json");
        replace_file(dir.path(), &path, b"1").unwrap();
        replace_file(dir.path(), &path, b"2").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "2");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn a_replaced_file_keeps_its_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("facts.jsonl");
        let mode = |path: &Path| fs::metadata(path).unwrap().permissions().mode() & 0o7777;
        for kept in [0o644, 0o640, 0o600, 0o664] {
            fs::write(&path, "old").unwrap();
            fs::set_permissions(&path, fs::Permissions::from_mode(kept)).unwrap();
            replace_file(dir.path(), &path, b"new").unwrap();
            assert_eq!(fs::read_to_string(&path).unwrap(), "new");
            assert_eq!(mode(&path), kept, "{kept:o}");
        }
        // A new file gets what any new file gets: 0666 less the umask (read where Linux
        // shows it; setting it would race with the other tests' files).
        let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
        let umask = status.lines().find_map(|l| l.strip_prefix("Umask:")).map(str::trim);
        if let Some(umask) = umask.and_then(|u| u32::from_str_radix(u, 8).ok()) {
            let fresh = dir.path().join("handoff.json");
            replace_file(dir.path(), &fresh, b"{}").unwrap();
            assert_eq!(mode(&fresh), 0o666 & !umask);
        }
    }

    #[test]
    fn a_held_lock_sweeps_what_killed_writers_left() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("memory");
        fs::create_dir_all(&root).unwrap();
        let left = [".handoff.json.a1B2c3.tmp", ".tool_stats.json.x9.tmp", ".facts.jsonl.q.tmp"];
        let kept = [".other.tmp", "handoff.json", ".handoff.json", ".handoffs.json.a.tmp"];
        for name in left.iter().chain(&kept) {
            fs::write(root.join(name), "x").unwrap();
        }
        with_lock(dir.path(), &root, LOCK_WAIT, || Ok(())).unwrap();
        let mut names: Vec<String> =
            fs::read_dir(&root).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        names.sort();
        let mut expected: Vec<&str> = kept.to_vec();
        expected.push(record::LOCK);
        expected.sort_unstable();
        assert_eq!(names, expected);
    }

    #[test]
    fn a_held_lock_times_out_loudly() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let err = with_lock(&root, &root, LOCK_WAIT, || {
            // A second open of the lock file conflicts with the first, even in-process.
            with_lock(&root, &root, Duration::from_millis(20), || Ok(()))
        })
        .unwrap_err();
        assert!(matches!(err, StoreError::LockTimeout { .. }), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn only_regular_files_inside_the_workspace_are_read_or_written() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        fs::create_dir_all(&ws).unwrap();
        let unusable_reason = |err: StoreError| match err {
            StoreError::Unusable { reason, .. } => reason,
            other => panic!("not unusable: {other}"),
        };
        let fifo = ws.join("fifo.jsonl");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        assert!(unusable_reason(read_bytes(&fifo).unwrap_err()).contains("FIFO"));
        assert!(unusable_reason(append_lines(&ws, &fifo, &["x"], false).unwrap_err()).contains("FIFO"));
        let zero = ws.join("zero.jsonl");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        assert!(unusable_reason(read_bytes(&zero).unwrap_err()).contains("device"));
        assert!(unusable_reason(append_lines(&ws, &zero, &["x"], false).unwrap_err()).contains("outside"));
        let outside = dir.path().join("outside.jsonl");
        fs::write(&outside, "").unwrap();
        let link = ws.join("link.jsonl");
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        assert!(unusable_reason(append_lines(&ws, &link, &["x"], false).unwrap_err()).contains("outside"));
        assert_eq!(fs::read(&outside).unwrap(), b"");
        let folder = ws.join("dir.jsonl");
        fs::create_dir(&folder).unwrap();
        assert!(unusable_reason(read_bytes(&folder).unwrap_err()).contains("directory"));
        // A directory of the store that leads outside is refused before anything is created.
        std::os::unix::fs::symlink(dir.path(), ws.join("away")).unwrap();
        let root = ws.join("away/memory");
        assert!(
            unusable_reason(with_lock(&ws, &root, LOCK_WAIT, || Ok(())).unwrap_err()).contains("outside")
        );
        assert!(!dir.path().join("memory").exists());
    }

    #[test]
    fn files_over_the_limit_are_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.jsonl");
        let file = File::create(&path).unwrap();
        file.set_len(MAX_FILE_BYTES + 1).unwrap();
        let err = read_bytes(&path).unwrap_err();
        assert!(matches!(err, StoreError::Unusable { .. }), "{err}");
        let message = err.to_string();
        assert!(message.contains("big.jsonl") && message.contains("64 MiB"), "{message}");
        // Complete lines (ending in a newline) one byte short of the limit: no room for more.
        file.set_len(MAX_FILE_BYTES - 2).unwrap();
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(b"\n").unwrap();
        let err = append_lines(dir.path(), &path, &["xy"], false).unwrap_err();
        assert!(err.to_string().contains("64 MiB"), "{err}");
    }
}
