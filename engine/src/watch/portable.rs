//! The portable backend: `notify`'s watcher thread, a debouncer thread, and watchman's
//! cookie for freshness. Used where the kernel's queue cannot be read directly (every
//! platform but Linux), and on Linux when asked for ([`Backend::Notify`]), which keeps it
//! tested.
//!
//! **Freshness.** [`Portable::sync_point`] writes a cookie file into a private directory
//! watched by the same watcher (watchman's technique). The kernel queues an event before
//! the system call that caused it returns, and one instance's queue is delivered in
//! order, so once the cookie's event has come through the two threads, every event for a
//! write that completed before the cookie was written has come through too.
//!
//! The debouncer is a few lines here rather than `notify-debouncer-full`: that crate is
//! built around recursive watches and file ids, while what the engine needs is ruff's
//! shape (flush after [`QUIET`], never hold a batch longer than [`MAX_BATCH_AGE`]), a
//! flush on each cookie, and overflow and watcher errors mapped to a rescan.
//!
//! [`Backend::Notify`]: super::Backend::Notify

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use notify::event::{EventKind, ModifyKind, RenameMode};
use notify::{RecommendedWatcher, RecursiveMode, Watcher as _};

use super::{AddError, Changes, MAX_BATCH_AGE, QUIET, WatchError};
use crate::ChangeEvent;

/// What the debouncer hands over.
enum Delivery {
    Batch(Vec<ChangeEvent>),
    /// Every event queued before cookie `n` was written has been delivered.
    Cookie(u64),
}

struct Cookies {
    dir: tempfile::TempDir,
    next: u64,
}

pub(super) struct Portable {
    notify: RecommendedWatcher,
    deliveries: Receiver<Delivery>,
    cookies: Option<Cookies>,
}

impl Portable {
    pub(super) fn new() -> Result<Self, WatchError> {
        let (raw_tx, raw_rx) = mpsc::channel();
        let (delivery_tx, deliveries) = mpsc::channel();
        let mut watcher = notify::recommended_watcher(raw_tx).map_err(WatchError::from_notify)?;
        // Without a cookie directory, `sync_point` reports that it cannot vouch for
        // freshness and callers rescan.
        let cookies = tempfile::Builder::new().prefix("ctxgraph-cookies-").tempdir().ok().and_then(|dir| {
            let path = std::fs::canonicalize(dir.path()).ok()?;
            watcher.watch(&path, RecursiveMode::NonRecursive).ok()?;
            Some((Cookies { dir, next: 0 }, path))
        });
        let cookie_dir = cookies.as_ref().map(|(_, path)| path.clone());
        std::thread::Builder::new()
            .name("ctxgraph-debouncer".to_owned())
            .spawn(move || debounce(&raw_rx, &delivery_tx, cookie_dir.as_deref()))
            .map_err(WatchError)?;
        Ok(Self { notify: watcher, deliveries, cookies: cookies.map(|(cookies, _)| cookies) })
    }

    pub(super) fn watch(&mut self, dir: &Path) -> Result<(), AddError> {
        match self.notify.watch(dir, RecursiveMode::NonRecursive) {
            Ok(()) => Ok(()),
            Err(err) if matches!(err.kind, notify::ErrorKind::PathNotFound) => Err(AddError::NotFound),
            Err(_) => Err(AddError::Other),
        }
    }

    pub(super) fn unwatch(&mut self, dir: &Path) {
        // The directory may be gone already, which removed the watch with it.
        let _ = self.notify.unwatch(dir);
    }

    pub(super) fn next_batch(&mut self, timeout: Duration) -> Option<Vec<ChangeEvent>> {
        let deadline = Instant::now() + timeout;
        loop {
            match self.deliveries.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(Delivery::Batch(batch)) => return Some(batch),
                Ok(Delivery::Cookie(_)) => {}
                Err(_) => return None,
            }
        }
    }

    pub(super) fn pending(&mut self) -> Vec<ChangeEvent> {
        let mut merged = Changes::default();
        for delivery in self.deliveries.try_iter() {
            if let Delivery::Batch(batch) = delivery {
                merged.extend(batch);
            }
        }
        merged.into_vec()
    }

    pub(super) fn sync_point(&mut self, timeout: Duration) -> Option<Vec<ChangeEvent>> {
        let cookies = self.cookies.as_mut()?;
        cookies.next += 1;
        let n = cookies.next;
        let cookie = cookies.dir.path().join(n.to_string());
        let written = std::fs::write(&cookie, b"").is_ok();
        let mut merged = Changes::default();
        let deadline = Instant::now() + timeout;
        let mut seen = false;
        while written && !seen {
            match self.deliveries.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(Delivery::Batch(batch)) => merged.extend(batch),
                Ok(Delivery::Cookie(m)) => seen = m >= n,
                Err(_) => break,
            }
        }
        let _ = std::fs::remove_file(&cookie);
        // What did arrive is returned either way; with `None` the caller rescans on top.
        if seen { Some(merged.into_vec()) } else { None }
    }
}

/// Collects raw events into batches until the watcher is dropped.
fn debounce(
    raw: &Receiver<notify::Result<notify::Event>>,
    out: &Sender<Delivery>,
    cookie_dir: Option<&Path>,
) {
    let mut batch = Changes::default();
    let mut started = Instant::now();
    loop {
        let received = if batch.is_empty() {
            raw.recv().map_err(|_| RecvTimeoutError::Disconnected)
        } else {
            let left = MAX_BATCH_AGE.saturating_sub(started.elapsed());
            if left.is_zero() { Err(RecvTimeoutError::Timeout) } else { raw.recv_timeout(QUIET.min(left)) }
        };
        let event = match received {
            Ok(event) => event,
            Err(RecvTimeoutError::Timeout) => {
                if !flush(&mut batch, out) {
                    return;
                }
                continue;
            }
            Err(RecvTimeoutError::Disconnected) => return,
        };
        if let Some(dir) = cookie_dir
            && let Ok(event) = &event
            && event.paths.iter().any(|p| p.starts_with(dir))
        {
            // A cookie: everything queued before it is in `batch` now.
            let created = matches!(event.kind, EventKind::Create(_));
            let cookie = event.paths.iter().find_map(|p| p.file_name()?.to_str()?.parse::<u64>().ok());
            if let (true, Some(n)) = (created, cookie)
                && (!flush(&mut batch, out) || out.send(Delivery::Cookie(n)).is_err())
            {
                return;
            }
            continue;
        }
        if batch.is_empty() {
            started = Instant::now();
        }
        batch.extend(changes_from(event));
    }
}

/// Sends the batch (if any), leaving it empty. False once nobody listens.
fn flush(batch: &mut Changes, out: &Sender<Delivery>) -> bool {
    let batch = std::mem::take(batch).into_batch();
    batch.is_empty() || out.send(Delivery::Batch(batch)).is_ok()
}

/// One notify event as changes. Anything the watcher could not keep track of (a queue
/// overflow, an error) becomes a rescan: never a stale answer.
fn changes_from(event: notify::Result<notify::Event>) -> Vec<ChangeEvent> {
    let Ok(event) = event else { return vec![ChangeEvent::Rescan] };
    if event.need_rescan() {
        return vec![ChangeEvent::Rescan];
    }
    let each = |make: fn(PathBuf) -> ChangeEvent| event.paths.iter().cloned().map(make).collect();
    match event.kind {
        EventKind::Access(_) => Vec::new(),
        EventKind::Create(_) => each(ChangeEvent::Created),
        EventKind::Remove(_) => each(ChangeEvent::Removed),
        EventKind::Modify(ModifyKind::Name(RenameMode::Both)) if event.paths.len() == 2 => {
            vec![ChangeEvent::Renamed { from: event.paths[0].clone(), to: event.paths[1].clone() }]
        }
        // One side of a rename, or a rename notify could not pair: re-stat each path.
        EventKind::Modify(ModifyKind::Name(_)) => each(ChangeEvent::Created),
        EventKind::Modify(_) => each(ChangeEvent::Modified),
        // Unknown: assume the worst for each path named.
        EventKind::Any | EventKind::Other => each(ChangeEvent::Created),
    }
}
