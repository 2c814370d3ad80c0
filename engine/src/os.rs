//! The real file system behind [`System`].

use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use ctxgraph_db::system::{CompactString, DirEntry, EntryKind, FileKind, System};

/// Files above this size are refused: no model context holds them, and reading them
/// whole would only exhaust memory. opencode has no limit; ctxgraph reports an error.
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// The real file system (files over [`MAX_FILE_BYTES`] fail to read).
#[derive(Debug, Default)]
pub struct OsSystem;

/// Reads a whole regular file, refusing anything else without waiting on it.
///
/// Opening a FIFO for reading blocks until a writer appears, and a device can stream
/// forever, so a rule file, config or snapshot that is one must never be read. The path is
/// opened with `O_NONBLOCK` (which opens a FIFO immediately and changes nothing for a
/// regular file) and the *opened* file is checked, so a swap between a check and the open
/// cannot slip one through. The error names what the path is instead.
pub fn read_regular_file(path: &Path) -> io::Result<Vec<u8>> {
    let file = open_without_blocking(path)?;
    let meta = file.metadata()?;
    if meta.is_dir() {
        return Err(io::ErrorKind::IsADirectory.into());
    }
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}, not a regular file", describe_special(meta.file_type())),
        ));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("file is {} bytes, over ctxgraph's limit of {MAX_FILE_BYTES}", meta.len()),
        ));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or_default());
    // `take` guards against a file that grows while we read it.
    io::Read::read_to_end(&mut io::Read::take(file, MAX_FILE_BYTES + 1), &mut bytes)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(io::Error::new(io::ErrorKind::FileTooLarge, "file grew past ctxgraph's size limit"));
    }
    Ok(bytes)
}

#[cfg(unix)]
fn open_without_blocking(path: &Path) -> io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY).open(path)
}

#[cfg(not(unix))]
fn open_without_blocking(path: &Path) -> io::Result<std::fs::File> {
    std::fs::File::open(path)
}

/// `ctime`: unlike the modification time, no program can set it back, and it moves when
/// a directory's entries change. Elsewhere the modification time is the best there is.
fn status_changed(meta: &std::fs::Metadata) -> Option<SystemTime> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let seconds = u64::try_from(meta.ctime()).ok()?;
        let nanos = u32::try_from(meta.ctime_nsec()).ok()?;
        SystemTime::UNIX_EPOCH.checked_add(std::time::Duration::new(seconds, nanos))
    }
    #[cfg(not(unix))]
    {
        meta.modified().ok()
    }
}

/// What a path that is neither a regular file nor a directory is, in words.
fn describe_special(file_type: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "is a FIFO (named pipe)";
        }
        if file_type.is_socket() {
            return "is a socket";
        }
        if file_type.is_char_device() {
            return "is a character device";
        }
        if file_type.is_block_device() {
            return "is a block device";
        }
    }
    let _ = file_type;
    "is not a regular file"
}

impl System for OsSystem {
    fn kind(&self, path: &Path) -> FileKind {
        self.kind_and_change(path).0
    }

    fn kind_and_change(&self, path: &Path) -> (FileKind, Option<SystemTime>) {
        match std::fs::metadata(path) {
            Ok(meta) => {
                let kind = if meta.is_file() {
                    FileKind::File
                } else if meta.is_dir() {
                    FileKind::Directory
                } else {
                    FileKind::Other
                };
                (kind, status_changed(&meta))
            }
            Err(err) => (FileKind::from_io_error(&err), None),
        }
    }

    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        read_regular_file(path)
    }

    fn read_dir(&self, path: &Path) -> io::Result<Vec<DirEntry>> {
        let mut entries = Vec::new();
        for entry in std::fs::read_dir(path)? {
            let entry = entry?;
            // opencode's paths are JS strings; a name that is not UTF-8 cannot be matched
            // or printed faithfully, so it is left out.
            let file_name = entry.file_name();
            let Some(name) = file_name.to_str().map(CompactString::new) else { continue };
            let kind = match entry.file_type() {
                Ok(t) if t.is_symlink() => EntryKind::Symlink,
                Ok(t) if t.is_dir() => EntryKind::Directory,
                Ok(t) if t.is_file() => EntryKind::File,
                _ => EntryKind::Other,
            };
            entries.push(DirEntry { name, kind });
        }
        Ok(entries)
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        std::fs::canonicalize(path)
    }

    fn file_len(&self, path: &Path) -> io::Result<u64> {
        let meta = std::fs::metadata(path)?;
        if meta.is_dir() {
            return Err(io::ErrorKind::IsADirectory.into());
        }
        Ok(meta.len())
    }

    fn read_at(&self, path: &Path, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let file = open_without_blocking(path)?;
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, describe_special(meta.file_type())));
        }
        read_at(&file, offset, buf)
    }
}

#[cfg(unix)]
fn read_at(file: &std::fs::File, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, offset)
}

#[cfg(not(unix))]
fn read_at(mut file: &std::fs::File, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
    io::Seek::seek(&mut file, io::SeekFrom::Start(offset))?;
    io::Read::read(&mut file, buf)
}
