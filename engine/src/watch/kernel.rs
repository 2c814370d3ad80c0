//! The Linux backend: ctxgraph owns the inotify descriptor and reads its queue itself, on
//! the thread that answers, without a cookie or a thread hop.
//!
//! **Freshness.** inotify queues an event inside the system call that caused it (the
//! `fsnotify` hook runs before `write`, `rename`, `unlink` … return), so every write
//! that completed before a request was sent already has its event in the queue when the
//! request is read. Draining the queue until it reports empty (`EAGAIN` on the
//! non-blocking descriptor) therefore sees all of them: [`Kernel::sync_point`] is one
//! `read` when nothing changed. (This holds for local file systems; network file systems
//! report remote writes late or never, with either backend.)
//!
//! A rename is two events with one cookie, queued together by the `rename` call; a drain
//! reads both, so they are paired here. A half seen alone (the other side is outside the
//! watched directories) becomes a re-stat of its path, as with the portable backend.

use std::collections::HashMap;
use std::io;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask};
use rustix::event::{PollFd, PollFlags, Timespec};

use super::{AddError, Changes, MAX_BATCH_AGE, QUIET, WatchError};
use crate::ChangeEvent;

/// What each directory is watched for: everything that adds, removes, renames or edits an
/// entry, and the directory itself going away. Symlinks are followed, as `notify` does:
/// the paths watched are canonical, so one only appears through a race, and then its
/// target is what the events describe.
const MASK: WatchMask = WatchMask::ATTRIB
    .union(WatchMask::CREATE)
    .union(WatchMask::DELETE)
    .union(WatchMask::CLOSE_WRITE)
    .union(WatchMask::MODIFY)
    .union(WatchMask::MOVED_FROM)
    .union(WatchMask::MOVED_TO)
    .union(WatchMask::DELETE_SELF)
    .union(WatchMask::MOVE_SELF)
    .union(WatchMask::ONLYDIR);

/// Room for a few hundred events per `read`; a burst larger than that takes more reads.
const BUFFER_BYTES: usize = 64 * 1024;

pub(super) struct Kernel {
    inotify: Inotify,
    buffer: Vec<u8>,
    /// Watch descriptor → the (canonical) directory it watches: the watcher's own
    /// allocation of the path.
    dirs: HashMap<WatchDescriptor, Arc<Path>>,
    /// The reverse, to remove a watch by path.
    descriptors: HashMap<Arc<Path>, WatchDescriptor>,
}

impl Kernel {
    pub(super) fn new() -> Result<Self, WatchError> {
        // `init` opens the descriptor non-blocking and close-on-exec.
        let inotify = Inotify::init().map_err(WatchError)?;
        Ok(Self { inotify, buffer: vec![0; BUFFER_BYTES], dirs: HashMap::new(), descriptors: HashMap::new() })
    }

    pub(super) fn watch(&mut self, dir: &Arc<Path>) -> Result<(), AddError> {
        match self.inotify.watches().add(dir, MASK) {
            Ok(wd) => {
                // The same inode reached again under another name (a directory renamed
                // while its old watch was still live) gets the same descriptor back: it
                // now reports under the new name only.
                if let Some(old) = self.dirs.insert(wd.clone(), dir.clone())
                    && old != *dir
                {
                    self.descriptors.remove(&old);
                }
                self.descriptors.insert(dir.clone(), wd);
                Ok(())
            }
            Err(err) if matches!(err.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory) => {
                Err(AddError::NotFound)
            }
            // ENOSPC (the per-user watch limit), EACCES, ENOMEM: the caller degrades.
            Err(_) => Err(AddError::Other),
        }
    }

    pub(super) fn unwatch(&mut self, dir: &Path) {
        if let Some(wd) = self.descriptors.remove(dir) {
            self.dirs.remove(&wd);
            // Fails when the kernel dropped the watch already (the directory is gone).
            let _ = self.inotify.watches().remove(wd);
        }
    }

    /// Everything queued now: one `read` when nothing changed. `None` only when the
    /// descriptor itself failed, and the caller rescans.
    pub(super) fn sync_point(&mut self) -> Option<Vec<ChangeEvent>> {
        let mut changes = Changes::default();
        self.drain(&mut changes).ok()?;
        Some(changes.into_batch())
    }

    pub(super) fn pending(&mut self) -> Vec<ChangeEvent> {
        self.sync_point().unwrap_or_else(|| vec![ChangeEvent::Rescan])
    }

    /// Waits up to `timeout` for a first event, then collects until [`QUIET`] passes
    /// without one or the batch is [`MAX_BATCH_AGE`] old.
    pub(super) fn next_batch(&mut self, timeout: Duration) -> Option<Vec<ChangeEvent>> {
        let deadline = Instant::now() + timeout;
        let mut changes = Changes::default();
        // Events that map to nothing (a watch removed) do not start a batch.
        while changes.is_empty() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || !self.wait(left) {
                return None;
            }
            if self.drain(&mut changes).is_err() {
                return Some(vec![ChangeEvent::Rescan]);
            }
        }
        let started = Instant::now();
        loop {
            let left = MAX_BATCH_AGE.saturating_sub(started.elapsed());
            if left.is_zero() || !self.wait(QUIET.min(left)) {
                return Some(changes.into_batch());
            }
            if self.drain(&mut changes).is_err() {
                return Some(vec![ChangeEvent::Rescan]);
            }
        }
    }

    /// True when the queue became readable within `timeout`.
    fn wait(&self, timeout: Duration) -> bool {
        let timeout = Timespec::try_from(timeout).unwrap_or(Timespec { tv_sec: i64::MAX, tv_nsec: 0 });
        let fd = self.inotify.as_fd();
        let mut fds = [PollFd::new(&fd, PollFlags::IN)];
        // EINTR and the like: report "nothing yet"; callers loop until their deadline.
        rustix::event::poll(&mut fds, Some(&timeout)).is_ok_and(|ready| ready > 0)
    }

    /// Reads the queue until it is empty, appending what each event means.
    fn drain(&mut self, changes: &mut Changes) -> io::Result<()> {
        let mut moved_from: HashMap<u32, PathBuf> = HashMap::new();
        loop {
            let events = match self.inotify.read_events(&mut self.buffer) {
                Ok(events) => events,
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => break,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(err),
            };
            for event in events {
                if event.mask.contains(EventMask::Q_OVERFLOW) {
                    changes.extend([ChangeEvent::Rescan]);
                    continue;
                }
                if event.mask.contains(EventMask::IGNORED) {
                    // The kernel dropped the watch (its directory is gone, or we removed
                    // it); the events before this one already said why.
                    if let Some(dir) = self.dirs.remove(&event.wd) {
                        self.descriptors.remove(&dir);
                    }
                    continue;
                }
                let Some(dir) = self.dirs.get(&event.wd) else { continue };
                let path = event.name.map_or_else(|| dir.to_path_buf(), |name| dir.join(name));
                let mask = event.mask;
                let change = if mask.contains(EventMask::MOVED_FROM) {
                    moved_from.insert(event.cookie, path);
                    continue;
                } else if mask.contains(EventMask::MOVED_TO) {
                    match moved_from.remove(&event.cookie) {
                        Some(from) => ChangeEvent::Renamed { from, to: path },
                        None => ChangeEvent::Created(path),
                    }
                } else if mask.intersects(EventMask::CREATE | EventMask::MOVE_SELF) {
                    // A directory moved away is re-stated where it was: gone, or another.
                    ChangeEvent::Created(path)
                } else if mask.intersects(EventMask::DELETE | EventMask::DELETE_SELF) {
                    ChangeEvent::Removed(path)
                } else {
                    ChangeEvent::Modified(path)
                };
                changes.extend([change]);
            }
        }
        // The other side of these renames is not watched: re-stat where they left.
        changes.extend(moved_from.into_values().map(ChangeEvent::Created));
        Ok(())
    }
}
