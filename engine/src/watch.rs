//! File watching: `notify` events, debounced into batches of [`ChangeEvent`]s.
//!
//! Only the directories the graph depends on are watched, each non-recursively: for every
//! path that has a `File` input, the nearest existing directory at or above it. That covers
//! the find-up walks (the directories on the way up), the globs (every directory they
//! listed), config and home paths, and paths that do not exist yet (their nearest existing
//! ancestor reports the directory being created). The set is derived from the `Files`
//! table after every batch and build ([`Watcher::sync`]), so it grows with the graph.
//!
//! The debouncer is a few lines here rather than `notify-debouncer-full`: that crate is
//! built around recursive watches and file ids, while what the engine needs is ruff's
//! shape (flush after 10 ms of quiet, never hold a batch longer than 3 s) plus mapping
//! overflow and watcher errors to a rescan.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use ctxgraph_queries::Db;
use ctxgraph_queries::system::FileKind;
use notify::event::{EventKind, ModifyKind, RenameMode};
use notify::{RecommendedWatcher, RecursiveMode, Watcher as _};

use crate::{ChangeEvent, Engine};

/// A batch is flushed after this long without a new event…
pub const QUIET: Duration = Duration::from_millis(10);
/// …or once its first event is this old, whichever comes first.
pub const MAX_BATCH_AGE: Duration = Duration::from_secs(3);

/// The operating system's file watcher could not be started.
#[derive(Debug, thiserror::Error)]
#[error("file watcher: {0}")]
pub struct WatchError(#[from] notify::Error);

/// Watches the directories the engine's graph looked at and turns their events into
/// batches of [`ChangeEvent`]s for [`Engine::apply_changes`].
pub struct Watcher {
    watcher: RecommendedWatcher,
    batches: Receiver<Vec<ChangeEvent>>,
    /// Directories with a live watch.
    watched: BTreeSet<PathBuf>,
    /// The input count when the watch set was last derived: the table only grows, so an
    /// unchanged count means an unchanged set (ruff's cache key).
    synced_inputs: Option<usize>,
    /// A watch could not be added (e.g. the inotify limit): changes there go unseen, so
    /// callers must rescan before answering.
    degraded: bool,
}

impl Watcher {
    /// A watcher with nothing watched yet; [`Watcher::track`] adds what a build looked at.
    pub fn new() -> Result<Self, WatchError> {
        let (raw_tx, raw_rx) = mpsc::channel();
        let (batch_tx, batches) = mpsc::channel();
        let watcher = notify::recommended_watcher(raw_tx)?;
        std::thread::Builder::new()
            .name("ctxgraph-debouncer".to_owned())
            .spawn(move || debounce(&raw_rx, &batch_tx))
            .map_err(|err| WatchError(notify::Error::io(err)))?;
        Ok(Self { watcher, batches, watched: BTreeSet::new(), synced_inputs: None, degraded: false })
    }

    /// Directories currently watched.
    pub fn watched(&self) -> &BTreeSet<PathBuf> {
        &self.watched
    }

    /// True when some directory could not be watched: the caller should rescan before
    /// each answer, because the watcher alone cannot keep the inputs current.
    pub fn is_degraded(&self) -> bool {
        self.degraded
    }

    /// The next batch, waiting at most `timeout`.
    pub fn next_batch(&self, timeout: Duration) -> Option<Vec<ChangeEvent>> {
        self.batches.recv_timeout(timeout).ok()
    }

    /// Every batch already delivered, merged, without waiting.
    pub fn pending(&self) -> Vec<ChangeEvent> {
        self.batches.try_iter().flatten().collect()
    }

    /// Applies `batch` to the engine and updates the watch set for what it changed.
    pub fn apply(&mut self, engine: &mut Engine, batch: &[ChangeEvent]) {
        if batch.is_empty() {
            return;
        }
        engine.apply_changes(batch);
        let unseen = self.sync(engine, batch);
        engine.apply_changes(&unseen);
    }

    /// Watches what the last build looked at for the first time.
    pub fn track(&mut self, engine: &mut Engine) {
        let unseen = self.sync(engine, &[]);
        engine.apply_changes(&unseen);
    }

    /// Brings the watch set in line with the engine's `File` inputs, after a build (new
    /// inputs) or after `applied` events (directories that came or went). Returns changes
    /// for paths whose existence differs from their input in directories that were not
    /// watched before: nobody reported what happened there between the query's look and
    /// the new watch.
    fn sync(&mut self, engine: &Engine, applied: &[ChangeEvent]) -> Vec<ChangeEvent> {
        let db = engine.db();
        let files = db.files();
        let existence_changed = applied.iter().any(|c| !matches!(c, ChangeEvent::Modified(_)));
        if !existence_changed && self.synced_inputs == Some(files.len()) {
            return Vec::new();
        }
        // A directory deleted (and perhaps recreated) under a live watch lost that watch.
        let mut stale: Vec<PathBuf> = Vec::new();
        for change in applied {
            match change {
                ChangeEvent::Created(p) | ChangeEvent::Removed(p) => stale.push(p.clone()),
                ChangeEvent::Renamed { from, to } => stale.extend([from.clone(), to.clone()]),
                ChangeEvent::Modified(_) => {}
                ChangeEvent::Rescan => stale.extend(self.watched.iter().cloned()),
            }
        }
        for dir in stale.iter().filter(|dir| self.watched.contains(*dir)) {
            let _ = self.watcher.unwatch(dir);
        }
        self.watched.retain(|dir| !stale.contains(dir));

        let wanted = wanted_dirs(engine);
        let gone: Vec<PathBuf> = self.watched.difference(&wanted).cloned().collect();
        for dir in gone {
            // The directory may be gone already, which removed the watch with it.
            let _ = self.watcher.unwatch(&dir);
            self.watched.remove(&dir);
        }
        let mut added = BTreeSet::new();
        for dir in wanted {
            if self.watched.contains(&dir) {
                continue;
            }
            match self.watcher.watch(&dir, RecursiveMode::NonRecursive) {
                Ok(()) => {
                    self.watched.insert(dir.clone());
                    added.insert(dir);
                }
                Err(_) => self.degraded = true,
            }
        }
        self.synced_inputs = Some(files.len());
        // Existence only: a re-stat is cheap, a re-read of every file is not.
        let mut unseen = Vec::new();
        for (path, file) in files.paths() {
            let in_new_dir = path.parent().is_some_and(|parent| added.contains(parent));
            if in_new_dir && db.system().kind(&path) != file.kind(db) {
                unseen.push(ChangeEvent::Created(path));
            }
        }
        unseen
    }
}

/// The nearest existing directory at or above every path with an input.
fn wanted_dirs(engine: &Engine) -> BTreeSet<PathBuf> {
    let db = engine.db();
    let files = db.files();
    let mut is_dir: HashMap<PathBuf, bool> = HashMap::new();
    let mut check = |dir: &Path| -> bool {
        *is_dir.entry(dir.to_path_buf()).or_insert_with(|| match files.existing(dir) {
            Some(file) => file.kind(db) == FileKind::Directory,
            None => db.system().kind(dir) == FileKind::Directory,
        })
    };
    let mut wanted = BTreeSet::new();
    for (path, file) in files.paths() {
        let start = if file.kind(db) == FileKind::Directory { Some(path.as_path()) } else { path.parent() };
        if let Some(dir) = start.into_iter().flat_map(Path::ancestors).find(|dir| check(dir)) {
            wanted.insert(dir.to_path_buf());
        }
    }
    wanted
}

/// Collects raw events into batches until the watcher is dropped.
fn debounce(raw: &Receiver<notify::Result<notify::Event>>, batches: &Sender<Vec<ChangeEvent>>) {
    while let Ok(first) = raw.recv() {
        let started = Instant::now();
        let mut batch = Vec::new();
        push_unique(&mut batch, changes_from(first));
        loop {
            let left = MAX_BATCH_AGE.saturating_sub(started.elapsed());
            match raw.recv_timeout(QUIET.min(left)) {
                Ok(event) => push_unique(&mut batch, changes_from(event)),
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => return,
            }
            if left.is_zero() {
                break;
            }
        }
        if batch.is_empty() {
            continue;
        }
        if batch.contains(&ChangeEvent::Rescan) {
            batch = vec![ChangeEvent::Rescan];
        }
        if batches.send(batch).is_err() {
            return;
        }
    }
}

fn push_unique(batch: &mut Vec<ChangeEvent>, changes: Vec<ChangeEvent>) {
    for change in changes {
        if !batch.contains(&change) {
            batch.push(change);
        }
    }
}

/// One notify event as changes. Anything the watcher could not keep track of (a queue
/// overflow, an error) becomes a rescan: never a stale answer.
pub fn changes_from(event: notify::Result<notify::Event>) -> Vec<ChangeEvent> {
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

#[cfg(test)]
mod tests {
    use notify::event::{CreateKind, DataChange, Flag};

    use super::*;

    fn event(kind: EventKind, paths: &[&str]) -> notify::Event {
        paths.iter().fold(notify::Event::new(kind), |e, p| e.add_path(PathBuf::from(p)))
    }

    #[test]
    fn overflow_and_errors_become_a_rescan() {
        let overflow = notify::Event::new(EventKind::Other).set_flag(Flag::Rescan);
        assert_eq!(changes_from(Ok(overflow)), [ChangeEvent::Rescan]);
        assert_eq!(changes_from(Err(notify::Error::generic("lost"))), [ChangeEvent::Rescan]);
    }

    #[test]
    fn events_map_to_changes() {
        let created = event(EventKind::Create(CreateKind::File), &["/r/AGENTS.md"]);
        assert_eq!(changes_from(Ok(created)), [ChangeEvent::Created("/r/AGENTS.md".into())]);
        let written = event(EventKind::Modify(ModifyKind::Data(DataChange::Any)), &["/r/a.md"]);
        assert_eq!(changes_from(Ok(written)), [ChangeEvent::Modified("/r/a.md".into())]);
        let renamed = event(EventKind::Modify(ModifyKind::Name(RenameMode::Both)), &["/r/a", "/r/b"]);
        assert_eq!(
            changes_from(Ok(renamed)),
            [ChangeEvent::Renamed { from: "/r/a".into(), to: "/r/b".into() }]
        );
        let read = event(EventKind::Access(notify::event::AccessKind::Any), &["/r/a.md"]);
        assert!(changes_from(Ok(read)).is_empty());
    }
}
