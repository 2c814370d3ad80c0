//! File watching: `notify` events, debounced into batches of [`ChangeEvent`]s.
//!
//! Only the directories the graph depends on are watched, each non-recursively: for every
//! path that has a `File` input, the nearest existing directory at or above it. That covers
//! the find-up walks (the directories on the way up), the globs (every directory they
//! listed), config and home paths, and paths that do not exist yet (their nearest existing
//! ancestor reports the directory being created).
//!
//! **Symlinks.** Inputs are keyed by lexical path, but the kernel watches inodes, and two
//! paths to one directory share one inotify watch (notify then reports events under only
//! one of them, and dropping either drops both). So every directory is watched once, by
//! its canonical path, and events are mapped back to each lexical path that reaches it.
//! A symlink is resolved here as the kernel resolves it, one directory entry at a time
//! (links to links included), and every directory an entry was looked up in is watched:
//! the link's own (to see it re-pointed), each ancestor of its target (to see one renamed,
//! removed or created), and the target's (to see it edited). An event at or above a path
//! looked up re-states the link and everything read through it (#24 D1).
//!
//! **Incremental.** The watch set is kept as reference counts: each input records the
//! directories it needs, new inputs are read from the `Files` creation log, and an event
//! that adds, removes or replaces a path recomputes only the inputs at or below it. When
//! a directory is renamed or deleted, notify drops every watch below it; the same subtree
//! is marked unwatched here and re-added where still needed, and what changed there
//! meanwhile is re-stated.
//!
//! **Between a read and its watch.** A build reads a directory before it is watched (and
//! `serve` adds the watches only after its reply). [`Watcher::track`] re-states every input
//! in or directly below a directory it starts watching: one that appeared or vanished is
//! created or removed, one whose `ctime` is at or after the build's start
//! ([`status_clock`]) is modified and re-read.
//!
//! **Backends.** On Linux the engine owns the inotify descriptor and drains its queue on
//! the answering thread (`kernel.rs`); elsewhere, and on Linux when asked for, `notify`'s
//! watcher with a debouncer thread and watchman's cookie (`portable.rs`). Both make
//! [`Watcher::sync_point`] see every write that completed before it was called.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use smallvec::SmallVec;

use crate::database::Database;
use crate::index::{subtree, subtree_of_set};
use crate::{Applied, ChangeEvent, Engine};
use ctxgraph_db::Db;
use ctxgraph_db::system::FileKind;

/// A batch is flushed after this long without a new event…
pub const QUIET: Duration = Duration::from_millis(10);
/// …or once its first event is this old, whichever comes first.
pub const MAX_BATCH_AGE: Duration = Duration::from_secs(3);
/// How long [`Watcher::sync_point`] waits for its cookie before giving up (the caller
/// then rescans instead).
pub const COOKIE_TIMEOUT: Duration = Duration::from_secs(2);
/// Symlinks followed from one input before giving up (Linux's own limit).
const MAX_LINK_HOPS: usize = 40;

/// The time on the clock file systems stamp `ctime` with, for [`Watcher::track`]: every
/// change from now on carries this time or a later one. On Linux that is the coarse
/// real-time clock (`current_time()` reads it: up to one scheduler tick behind the precise
/// clock, so a write just after a precise "now" can carry an earlier time). Elsewhere the
/// precise clock, less a margin wider than such a tick; either way an earlier time only
/// costs re-reading a file changed just before a build.
pub fn status_clock() -> SystemTime {
    #[cfg(target_os = "linux")]
    {
        let now = rustix::time::clock_gettime(rustix::time::ClockId::RealtimeCoarse);
        if let (Ok(seconds), Ok(nanos)) = (u64::try_from(now.tv_sec), u32::try_from(now.tv_nsec))
            && let Some(at) = SystemTime::UNIX_EPOCH.checked_add(Duration::new(seconds, nanos))
        {
            return at;
        }
    }
    let margin = Duration::from_millis(50);
    SystemTime::now().checked_sub(margin).unwrap_or(SystemTime::UNIX_EPOCH)
}

#[cfg(target_os = "linux")]
mod kernel;
mod portable;

/// The operating system's file watcher could not be started.
#[derive(Debug, thiserror::Error)]
#[error("file watcher: {0}")]
pub struct WatchError(#[source] std::io::Error);

impl WatchError {
    fn from_notify(err: notify::Error) -> Self {
        match err.kind {
            notify::ErrorKind::Io(err) => WatchError(err),
            _ => WatchError(std::io::Error::other(err)),
        }
    }
}

/// Which mechanism delivers the kernel's events.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BackendKind {
    /// The best one here: [`BackendKind::Inotify`] on Linux, [`BackendKind::Notify`]
    /// elsewhere.
    #[default]
    Native,
    /// Linux only: ctxgraph reads the inotify queue itself, so a sync point costs one
    /// `read` and no thread hop.
    Inotify,
    /// The `notify` crate's watcher, a debouncer thread, and a cookie file per sync point.
    Notify,
}

/// Why a directory could not be watched.
enum AddError {
    /// It is gone (again): its parent's watch reports what comes next.
    NotFound,
    /// Anything else (the inotify watch limit…): changes there would go unseen.
    Other,
}

enum Backend {
    #[cfg(target_os = "linux")]
    Kernel(kernel::Kernel),
    Portable(portable::Portable),
}

impl Backend {
    fn new(kind: BackendKind) -> Result<Self, WatchError> {
        match kind {
            #[cfg(target_os = "linux")]
            BackendKind::Native | BackendKind::Inotify => Ok(Backend::Kernel(kernel::Kernel::new()?)),
            #[cfg(not(target_os = "linux"))]
            BackendKind::Inotify => Err(WatchError(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "the inotify backend exists on Linux only",
            ))),
            _ => Ok(Backend::Portable(portable::Portable::new()?)),
        }
    }

    fn watch(&mut self, dir: &Arc<Path>) -> Result<(), AddError> {
        match self {
            #[cfg(target_os = "linux")]
            Backend::Kernel(kernel) => kernel.watch(dir),
            Backend::Portable(portable) => portable.watch(dir),
        }
    }

    fn unwatch(&mut self, dir: &Path) {
        match self {
            #[cfg(target_os = "linux")]
            Backend::Kernel(kernel) => kernel.unwatch(dir),
            Backend::Portable(portable) => portable.unwatch(dir),
        }
    }
}

/// Watches the directories the engine's graph looked at and turns their events into
/// batches of [`ChangeEvent`]s for [`Engine::apply_changes`].
///
/// Every path held here is an `Arc<Path>`: the allocation of the path's `File` input where
/// it has one (the common case, a directory some query listed, whose canonical path is its
/// lexical path), so the watch set of a large tree costs reference counts, not copies.
pub struct Watcher {
    backend: Backend,
    /// Directories with a live watch (canonical paths).
    watched: BTreeSet<Arc<Path>>,
    /// Canonical directory → the lexical paths that reach it, each with the number of
    /// inputs that need it through that path. A directory is wanted while this is non-empty.
    dirs: BTreeMap<Arc<Path>, Users>,
    /// Canonical path looked up while following a symlink → the lexical links whose
    /// resolution went through it (each with the number of inputs that need it that way).
    /// Something appearing, vanishing or being renamed at or above such a path changes
    /// where the link leads, and so everything read through it.
    lookups: BTreeMap<Arc<Path>, Users>,
    /// Every input, with what it needs watched.
    inputs: BTreeMap<Arc<Path>, Needs>,
    /// How many of the `Files` table's inputs (in creation order) are in `inputs`.
    seen: usize,
    /// Lexical directory → how to watch it, until an event at or above it. `None` (no
    /// allocation) for the common case, a directory that is its own canonical path.
    resolved: BTreeMap<Arc<Path>, Option<Box<Resolved>>>,
    /// A watch could not be added (e.g. the inotify limit): changes there go unseen, so
    /// callers must rescan before answering.
    degraded: bool,
}

/// What one input needs watched: almost always one directory reached without a symlink,
/// kept as that directory's path alone (this map has an entry for every input of the
/// tree); symlinks on the way make the general, boxed form.
#[derive(Clone, Debug, Default)]
enum Needs {
    /// No directory at or above the input exists.
    #[default]
    Nothing,
    /// One directory whose canonical path is its lexical path.
    Dir(Arc<Path>),
    Linked(Box<Linked>),
}

/// The directories an input needs watched, and the paths its symlinks were resolved
/// through.
#[derive(Clone, Debug, Default)]
struct Linked {
    /// (canonical, lexical) pairs.
    dirs: Vec<(Arc<Path>, Arc<Path>)>,
    /// (looked-up path, lexical link) pairs: see [`Watcher::lookups`].
    lookups: Vec<(Arc<Path>, Arc<Path>)>,
}

impl Needs {
    /// The compact form where there is one.
    fn from_linked(linked: Linked) -> Self {
        match (linked.dirs.as_slice(), linked.lookups.as_slice()) {
            ([], []) => Needs::Nothing,
            ([(canonical, dir)], []) if canonical == dir => Needs::Dir(dir.clone()),
            _ => Needs::Linked(Box::new(linked)),
        }
    }

    /// The directories, (canonical, lexical).
    fn dirs(&self) -> impl Iterator<Item = (&Arc<Path>, &Arc<Path>)> {
        let (one, linked) = match self {
            Needs::Nothing => (None, &[][..]),
            Needs::Dir(dir) => (Some((dir, dir)), &[][..]),
            Needs::Linked(linked) => (None, linked.dirs.as_slice()),
        };
        one.into_iter().chain(linked.iter().map(|(canonical, dir)| (canonical, dir)))
    }

    /// (looked-up path, lexical link) pairs.
    fn lookups(&self) -> &[(Arc<Path>, Arc<Path>)] {
        match self {
            Needs::Linked(linked) => &linked.lookups,
            Needs::Nothing | Needs::Dir(_) => &[],
        }
    }
}

#[derive(Clone, Debug)]
struct Resolved {
    canonical: Arc<Path>,
    /// The directories whose entries the symlinks on the way depend on, (canonical,
    /// lexical): each link's parent (to see it re-pointed), and every directory its
    /// target was looked up in (to see an ancestor of the target renamed or created).
    link_parents: Vec<(Arc<Path>, Arc<Path>)>,
    /// (looked-up path, lexical link) pairs: see [`Watcher::lookups`].
    lookups: Vec<(Arc<Path>, Arc<Path>)>,
}

impl Resolved {
    /// A directory reached without a symlink: watched under its own path.
    fn itself(dir: &Arc<Path>) -> Self {
        Resolved { canonical: dir.clone(), link_parents: Vec::new(), lookups: Vec::new() }
    }
}

impl Watcher {
    /// A watcher with nothing watched yet, on this platform's best backend;
    /// [`Watcher::track`] adds what a build looked at.
    pub fn new() -> Result<Self, WatchError> {
        Self::with_backend(BackendKind::Native)
    }

    /// A watcher on the given backend.
    pub fn with_backend(kind: BackendKind) -> Result<Self, WatchError> {
        Ok(Self {
            backend: Backend::new(kind)?,
            watched: BTreeSet::new(),
            dirs: BTreeMap::new(),
            lookups: BTreeMap::new(),
            inputs: BTreeMap::new(),
            seen: 0,
            resolved: BTreeMap::new(),
            degraded: false,
        })
    }

    /// Directories currently watched (canonical paths).
    pub fn watched(&self) -> &BTreeSet<Arc<Path>> {
        &self.watched
    }

    /// True when some directory could not be watched: the caller should rescan before
    /// each answer, because the watcher alone cannot keep the inputs current.
    pub fn is_degraded(&self) -> bool {
        self.degraded
    }

    /// The next batch, waiting at most `timeout` for it to start.
    pub fn next_batch(&mut self, timeout: Duration) -> Option<Vec<ChangeEvent>> {
        match &mut self.backend {
            #[cfg(target_os = "linux")]
            Backend::Kernel(kernel) => kernel.next_batch(timeout),
            Backend::Portable(portable) => portable.next_batch(timeout),
        }
    }

    /// Every change already reported, merged, without waiting.
    pub fn pending(&mut self) -> Vec<ChangeEvent> {
        match &mut self.backend {
            #[cfg(target_os = "linux")]
            Backend::Kernel(kernel) => kernel.pending(),
            Backend::Portable(portable) => portable.pending(),
        }
    }

    /// Every change for a write that completed before this call, merged. `None` when that
    /// could not be established within `timeout` (the portable backend's cookie did not
    /// come back); the caller must then rescan to be sure.
    pub fn sync_point(&mut self, timeout: Duration) -> Option<Vec<ChangeEvent>> {
        match &mut self.backend {
            #[cfg(target_os = "linux")]
            Backend::Kernel(kernel) => kernel.sync_point(),
            Backend::Portable(portable) => portable.sync_point(timeout),
        }
    }

    /// Applies `batch` to the engine and updates the watch set for what it changed.
    /// Returns what changed in the inputs: nothing when every event was for a path no
    /// query has read.
    pub fn apply(&mut self, engine: &mut Engine, batch: &[ChangeEvent]) -> Applied {
        if batch.is_empty() {
            return Applied::default();
        }
        let lexical = self.to_lexical(batch);
        let applied = engine.apply_changes(&lexical);
        // What is below a directory that came or went was re-stated by the events already.
        let unseen = self.sync(engine, batch, &lexical, None);
        applied.merge(engine.apply_changes(&unseen))
    }

    /// Whether a build since the last [`Watcher::track`] looked at a path for the first time
    /// (when not, `track` has nothing to do).
    pub fn has_new_inputs(&self, engine: &Engine) -> bool {
        engine.db().files().created_count() > self.seen
    }

    /// Watches what the builds since the last call looked at for the first time.
    /// `read_since` ([`status_clock`], taken before the earliest of them started) dates
    /// their reads: what changed in a directory between a build's look and its watch being
    /// added is found by its `ctime`, so tracking may even run after the reply was sent.
    pub fn track(&mut self, engine: &mut Engine, read_since: SystemTime) {
        let unseen = self.sync(engine, &[], &[], Some(read_since));
        engine.apply_changes(&unseen);
    }

    /// Events as notify reports them (under the canonical directories watched) → the same
    /// events for every lexical path that reaches them.
    fn to_lexical(&self, batch: &[ChangeEvent]) -> Vec<ChangeEvent> {
        let mut out = Changes::default();
        for change in batch {
            match change {
                ChangeEvent::Rescan => out.extend([ChangeEvent::Rescan]),
                ChangeEvent::Modified(path) => {
                    let (paths, via_links) = self.aliases(path);
                    out.extend(paths.into_iter().map(ChangeEvent::Modified));
                    out.extend(via_links.into_iter().map(ChangeEvent::Modified));
                }
                ChangeEvent::Created(path) | ChangeEvent::Removed(path) => {
                    let make = if matches!(change, ChangeEvent::Created(_)) {
                        ChangeEvent::Created
                    } else {
                        ChangeEvent::Removed
                    };
                    let (paths, via_links) = self.aliases(path);
                    out.extend(paths.into_iter().map(make));
                    // The symlink itself stayed; what it resolves to appeared or vanished.
                    out.extend(via_links.into_iter().map(ChangeEvent::Created));
                }
                ChangeEvent::Renamed { from, to } => {
                    let (from_paths, from_links) = self.aliases(from);
                    let (to_paths, to_links) = self.aliases(to);
                    if let ([from], [to]) = (from_paths.as_slice(), to_paths.as_slice()) {
                        out.extend([ChangeEvent::Renamed { from: from.clone(), to: to.clone() }]);
                    } else {
                        out.extend(from_paths.into_iter().map(ChangeEvent::Removed));
                        out.extend(to_paths.into_iter().map(ChangeEvent::Created));
                    }
                    let links = from_links.into_iter().chain(to_links);
                    out.extend(links.map(ChangeEvent::Created));
                }
            }
        }
        out.into_vec()
    }

    /// The lexical paths naming `path` (a path under a watched canonical directory, or
    /// such a directory itself), and the symlinks resolved through `path` or a path below
    /// it (their target, or an ancestor of it, or a link on the way).
    fn aliases(&self, path: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
        let mut paths = Vec::new();
        if let Some(lexical) = self.dirs.get(path) {
            paths.extend(lexical.paths().map(|dir| dir.to_path_buf()));
        }
        if let (Some(parent), Some(name)) = (path.parent(), path.file_name())
            && let Some(lexical) = self.dirs.get(parent)
        {
            paths.extend(lexical.paths().map(|dir| dir.join(name)));
        }
        if !paths.iter().any(|p| p == path) {
            paths.push(path.to_path_buf());
        }
        paths.sort();
        paths.dedup();
        let mut via_links: Vec<PathBuf> = subtree(&self.lookups, path)
            .flat_map(|(_, links)| links.paths().map(|link| link.to_path_buf()))
            .collect();
        via_links.sort();
        via_links.dedup();
        (paths, via_links)
    }

    /// Brings the watch set in line with the inputs, after a build (new inputs) or after
    /// `raw` events (`lexical`, the same mapped to inputs' paths): paths that came, went or
    /// were replaced. Returns changes for inputs in directories that were not watched
    /// before: nobody reported what happened there between the query's look and the watch.
    fn sync(
        &mut self,
        engine: &Engine,
        raw: &[ChangeEvent],
        lexical: &[ChangeEvent],
        changed_since: Option<SystemTime>,
    ) -> Vec<ChangeEvent> {
        let db = engine.db();
        let mut dirty: BTreeSet<Arc<Path>> = BTreeSet::new();
        let mut recompute: BTreeSet<Arc<Path>> = BTreeSet::new();

        if raw.contains(&ChangeEvent::Rescan) {
            // The watcher lost track: start over from the inputs.
            for dir in std::mem::take(&mut self.watched) {
                self.backend.unwatch(&dir);
                dirty.insert(dir);
            }
            self.resolved.clear();
            recompute.extend(self.inputs.keys().cloned());
        } else {
            // notify drops every watch at or below a directory that was renamed or
            // deleted, and a directory recreated under the same name is a new inode.
            for path in structural_paths(raw) {
                let gone: Vec<Arc<Path>> = subtree_of_set(&self.watched, path).cloned().collect();
                for dir in gone {
                    self.backend.unwatch(&dir);
                    self.watched.remove(&dir);
                    dirty.insert(dir);
                }
            }
            // What an input needs watched depends on which paths above it exist and where
            // their symlinks point: recompute every input at or below a changed path.
            for path in structural_paths(lexical) {
                self.forget_resolved(path);
                recompute.extend(subtree(&self.inputs, path).map(|(p, _)| p.clone()));
            }
        }
        let new = db.files().created_since(self.seen);
        self.seen += new.len();
        recompute.extend(new.into_iter().map(|file| file.path(db).clone()));

        let mut added = Vec::new();
        // A directory newly watched may have changed between the look that asked for it
        // and its watch: the links resolved through it are resolved again, until no new
        // watch comes (each round follows a path that appeared meanwhile one step further).
        for _ in 0..MAX_LINK_HOPS {
            self.recompute(db, std::mem::take(&mut recompute), &mut dirty);
            let new_watches = self.update_watches(std::mem::take(&mut dirty));
            for link in self.links_looked_up_in(&new_watches) {
                self.forget_resolved(&link);
                recompute.extend(subtree(&self.inputs, &link).map(|(path, _)| path.clone()));
            }
            added.extend(new_watches);
            if recompute.is_empty() {
                break;
            }
        }
        self.unseen(engine, &added, changed_since)
    }

    /// Sets what each of `paths` (inputs) needs watched; the directories whose wanted
    /// state may have changed go into `dirty`.
    fn recompute(&mut self, db: &Database, paths: BTreeSet<Arc<Path>>, dirty: &mut BTreeSet<Arc<Path>>) {
        for path in paths {
            let needs = self.needs(db, &path);
            for (canonical, dir) in needs.dirs() {
                self.dirs.entry(canonical.clone()).or_default().add(dir);
                dirty.insert(canonical.clone());
            }
            for (looked_up, link) in needs.lookups() {
                self.lookups.entry(looked_up.clone()).or_default().add(link);
            }
            // Released after the new ones are added: a directory needed before and after
            // keeps its entry (and its allocation) rather than being dropped and re-made.
            let old = self.inputs.insert(path, needs).unwrap_or_default();
            for (canonical, dir) in old.dirs() {
                release(&mut self.dirs, canonical, dir);
                dirty.insert(canonical.clone());
            }
            for (looked_up, link) in old.lookups() {
                release(&mut self.lookups, looked_up, link);
            }
        }
    }

    /// Adds the watches wanted among `dirty` and removes those no longer wanted; returns
    /// the directories newly watched.
    fn update_watches(&mut self, dirty: BTreeSet<Arc<Path>>) -> Vec<Arc<Path>> {
        let mut added = Vec::new();
        for dir in dirty {
            // The entry's own key: `dirty` may hold another allocation of the same path.
            let wanted = self.dirs.get_key_value(&dir).map(|(dir, _)| dir.clone());
            let live = self.watched.contains(&dir);
            match wanted {
                Some(dir) if !live => match self.backend.watch(&dir) {
                    Ok(()) => {
                        self.watched.insert(dir.clone());
                        added.push(dir);
                    }
                    Err(AddError::NotFound) => {}
                    Err(AddError::Other) => self.degraded = true,
                },
                None if live => {
                    self.backend.unwatch(&dir);
                    self.watched.remove(&dir);
                }
                _ => {}
            }
        }
        added
    }

    /// The links resolved by looking up an entry of one of `dirs`.
    fn links_looked_up_in(&self, dirs: &[Arc<Path>]) -> BTreeSet<Arc<Path>> {
        let mut links = BTreeSet::new();
        for dir in dirs {
            let entries = subtree(&self.lookups, dir).filter(|(entry, _)| entry.parent() == Some(&**dir));
            links.extend(entries.flat_map(|(_, links)| links.paths().cloned()));
        }
        links
    }

    /// Drops the cached resolution of `dir` and of the directories below it.
    fn forget_resolved(&mut self, dir: &Path) {
        let stale: Vec<Arc<Path>> = subtree(&self.resolved, dir).map(|(dir, _)| dir.clone()).collect();
        for dir in stale {
            self.resolved.remove(&dir);
        }
    }

    /// Inputs in or directly below a newly watched directory that changed unseen: their
    /// existence differs from what the graph last saw (created or removed), or their status
    /// changed after `changed_since` (modified: re-read, and backdated where the bytes are
    /// the same); and the links resolved through an entry there. One `stat` per input.
    fn unseen(
        &self,
        engine: &Engine,
        added: &[Arc<Path>],
        changed_since: Option<SystemTime>,
    ) -> Vec<ChangeEvent> {
        let db = engine.db();
        let mut unseen = Changes::default();
        let dirs: HashSet<&Path> = added
            .iter()
            .filter_map(|canonical| self.dirs.get(canonical))
            .flat_map(Users::paths)
            .map(|dir| &**dir)
            .collect();
        let mut check = |path: &Arc<Path>| {
            // A directory's own listing can change between its read and its watch.
            if !dirs.contains(&**path) && !path.parent().is_some_and(|parent| dirs.contains(parent)) {
                return;
            }
            let Some(file) = db.files().existing(path) else { return };
            let (kind, changed) = db.system().kind_and_change(path);
            if kind != file.kind(db) {
                unseen.extend([ChangeEvent::Created(path.to_path_buf())]);
            } else if kind.exists() && changed.zip(changed_since).is_some_and(|(at, since)| at >= since) {
                unseen.extend([ChangeEvent::Modified(path.to_path_buf())]);
            }
        };
        // The first build adds most directories at once: one pass over every input then;
        // afterwards only the subtrees of the few directories added.
        if dirs.len() * 8 > self.inputs.len() {
            self.inputs.keys().for_each(&mut check);
        } else {
            for dir in &dirs {
                subtree(&self.inputs, dir).for_each(|(path, _)| check(path));
            }
        }
        let links = self.links_looked_up_in(added);
        unseen.extend(links.iter().map(|link| ChangeEvent::Created(link.to_path_buf())));
        unseen.into_vec()
    }

    /// What `path` (an input) needs watched.
    fn needs(&mut self, db: &Database, path: &Arc<Path>) -> Needs {
        let files = db.files();
        let is_dir = |dir: &Path| match files.existing(dir) {
            Some(file) => file.kind(db) == FileKind::Directory,
            None => db.system().kind(dir) == FileKind::Directory,
        };
        let mut needs = Linked::default();
        let own_kind = files.existing(path).map(|f| f.kind(db));
        let start = if own_kind == Some(FileKind::Directory) { Some(&**path) } else { path.parent() };
        let Some(anchor) = start.into_iter().flat_map(Path::ancestors).find(|dir| is_dir(dir)) else {
            return Needs::Nothing;
        };
        let anchor = if anchor == &**path { path.clone() } else { shared(db, anchor) };
        let resolved = self.resolve(db, &anchor);
        needs.dirs.push((resolved.canonical.clone(), anchor.clone()));
        needs.dirs.extend(resolved.link_parents);
        needs.lookups.extend(resolved.lookups);
        if anchor != *path {
            follow_links(db, path, &resolved.canonical, &mut needs);
        }
        Needs::from_linked(needs)
    }

    /// The canonical path of an existing lexical directory, the directories the symlinks
    /// on the way depend on, and what they were resolved through. Derived from the
    /// parent's (one `lstat` per directory rather than a `realpath` per directory) and
    /// cached until an event at or above it.
    fn resolve(&mut self, db: &Database, dir: &Arc<Path>) -> Resolved {
        if let Some(resolved) = self.resolved.get(dir) {
            return resolved.as_deref().cloned().unwrap_or_else(|| Resolved::itself(dir));
        }
        let resolved = match (dir.parent(), dir.file_name()) {
            (Some(parent), Some(name)) => {
                let parent = match self.resolved.get_key_value(parent) {
                    Some((parent, _)) => parent.clone(),
                    None => shared(db, parent),
                };
                let above = self.resolve(db, &parent);
                let is_link = std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink());
                let target = if is_link { std::fs::read_link(dir).ok() } else { None };
                if let Some(target) = target {
                    let walk = walk_link(&above.canonical, &target);
                    let Resolved { canonical: above_canonical, mut link_parents, mut lookups } = above;
                    link_parents.push((above_canonical, parent));
                    record_walk(db, dir, &walk, &mut link_parents, &mut lookups);
                    Resolved { canonical: shared(db, &walk.canonical), link_parents, lookups }
                } else if above.canonical == parent {
                    // No symlink on the way (the common case): the canonical path is the
                    // lexical one, and shares its allocation.
                    Resolved { canonical: dir.clone(), ..above }
                } else {
                    let canonical = shared(db, &above.canonical.join(name));
                    Resolved { canonical, ..above }
                }
            }
            _ => Resolved::itself(dir),
        };
        let cached = (resolved.canonical != *dir || !resolved.link_parents.is_empty())
            .then(|| Box::new(resolved.clone()));
        self.resolved.insert(dir.clone(), cached);
        resolved
    }
}

/// A symlinked input: watch every directory its target was looked up in (the links'
/// own, to see one re-pointed; the target's ancestors, to see one renamed, removed or
/// created; the target's, to see it edited).
fn follow_links(db: &Database, path: &Arc<Path>, from: &Path, needs: &mut Linked) {
    let Ok(target) = std::fs::read_link(path) else { return };
    let walk = walk_link(from, &target);
    record_walk(db, path, &walk, &mut needs.dirs, &mut needs.lookups);
}

/// Adds what `walk` (the resolution of `link`) depends on: the directories it looked
/// in, to watch, and the paths it looked up, each tied to `link`.
fn record_walk(
    db: &Database,
    link: &Arc<Path>,
    walk: &Walk,
    dirs: &mut Vec<(Arc<Path>, Arc<Path>)>,
    lookups: &mut Vec<(Arc<Path>, Arc<Path>)>,
) {
    let mut last_dir: Option<&Path> = None;
    for looked_up in &walk.looked_up {
        if let Some(dir) = looked_up.parent()
            && last_dir != Some(dir)
        {
            let dir_shared = shared(db, dir);
            dirs.push((dir_shared.clone(), dir_shared));
            last_dir = Some(dir);
        }
        lookups.push((shared(db, looked_up), link.clone()));
    }
}

/// Where one symlink leads, found the way the kernel finds it: one directory entry at a
/// time, following the links met on the way (links to links included).
struct Walk {
    /// The canonical target; from the first part that does not exist on, as written.
    canonical: PathBuf,
    /// Every path looked up, in order: each lies in a directory whose listing decides
    /// where the link leads. The first one missing is the last (its parent reports it
    /// appearing).
    looked_up: Vec<PathBuf>,
}

/// Resolves `target`, the content of a symlink in the canonical directory `from`.
fn walk_link(from: &Path, target: &Path) -> Walk {
    let mut at = from.to_path_buf();
    let mut looked_up = Vec::new();
    // The components still to follow, the next one last.
    let mut todo: Vec<Step> = Vec::new();
    push_steps(&mut todo, target);
    let mut hops = 0;
    let mut missing = false;
    while let Some(step) = todo.pop() {
        match step {
            Step::Prefix(prefix) => at = PathBuf::from(prefix),
            // Pushing the root onto a path replaces everything after its prefix.
            Step::Root => at.push(Component::RootDir.as_os_str()),
            Step::Up => {
                at.pop();
            }
            Step::Name(name) => {
                at.push(name);
                if missing {
                    continue;
                }
                looked_up.push(at.clone());
                match std::fs::symlink_metadata(&at) {
                    Ok(meta) if meta.file_type().is_symlink() && hops < MAX_LINK_HOPS => {
                        hops += 1;
                        match std::fs::read_link(&at) {
                            Ok(next) => {
                                at.pop();
                                push_steps(&mut todo, &next);
                            }
                            Err(_) => missing = true,
                        }
                    }
                    // A file with more components to follow, or a loop of links: the
                    // kernel stops here too.
                    Ok(meta) => {
                        missing = meta.file_type().is_symlink() || (!meta.is_dir() && !todo.is_empty());
                    }
                    Err(_) => missing = true,
                }
            }
        }
    }
    Walk { canonical: at, looked_up }
}

/// One component of a path being resolved, owned (links met on the way add theirs).
enum Step {
    Prefix(OsString),
    Root,
    Up,
    Name(OsString),
}

/// Adds `path`'s components to `todo`, its first component last (to be taken first).
fn push_steps(todo: &mut Vec<Step>, path: &Path) {
    for component in path.components().rev() {
        todo.push(match component {
            Component::Prefix(prefix) => Step::Prefix(prefix.as_os_str().to_owned()),
            Component::RootDir => Step::Root,
            Component::CurDir => continue,
            Component::ParentDir => Step::Up,
            Component::Normal(name) => Step::Name(name.to_owned()),
        });
    }
}

/// `path` in the allocation of its `File` input when it has one (almost every directory
/// the watcher deals with does), else a new one.
fn shared(db: &Database, path: &Path) -> Arc<Path> {
    match db.files().existing(path) {
        Some(file) => file.path(db).clone(),
        None => Arc::from(path),
    }
}

/// Paths of events that add, remove or replace something (not content edits).
fn structural_paths(changes: &[ChangeEvent]) -> impl Iterator<Item = &PathBuf> {
    changes.iter().flat_map(|change| match change {
        ChangeEvent::Created(path) | ChangeEvent::Removed(path) => vec![path],
        ChangeEvent::Renamed { from, to } => vec![from, to],
        ChangeEvent::Modified(_) | ChangeEvent::Rescan => vec![],
    })
}

/// The paths through which inputs need one directory (or symlink target), each with how
/// many inputs need it that way. Almost always a single path: kept inline, where a list or
/// a one-entry `BTreeMap` would make an allocation for each of thousands of watched
/// directories.
#[derive(Debug, Default)]
struct Users(SmallVec<[(Arc<Path>, usize); 1]>);

impl Users {
    fn add(&mut self, user: &Arc<Path>) {
        match self.0.iter_mut().find(|(path, _)| path == user) {
            Some((_, count)) => *count += 1,
            None => self.0.push((user.clone(), 1)),
        }
    }

    /// Drops one reference; true when none is left.
    fn release(&mut self, user: &Path) -> bool {
        if let Some(at) = self.0.iter().position(|(path, _)| **path == *user) {
            self.0[at].1 -= 1;
            if self.0[at].1 == 0 {
                self.0.swap_remove(at);
            }
        }
        self.0.is_empty()
    }

    fn paths(&self) -> impl Iterator<Item = &Arc<Path>> {
        self.0.iter().map(|(path, _)| path)
    }
}

/// Drops one reference from `map[key]` for `user`, removing an emptied entry.
fn release(map: &mut BTreeMap<Arc<Path>, Users>, key: &Path, user: &Path) {
    if map.get_mut(key).is_some_and(|users| users.release(user)) {
        map.remove(key);
    }
}

/// Changes in the order first seen, without repeats. The set keeps a burst of thousands of
/// events (a branch checkout) linear where a `Vec::contains` per event would not be.
#[derive(Default)]
struct Changes {
    list: Vec<ChangeEvent>,
    seen: HashSet<ChangeEvent>,
}

impl Changes {
    fn extend(&mut self, changes: impl IntoIterator<Item = ChangeEvent>) {
        for change in changes {
            if self.seen.insert(change.clone()) {
                self.list.push(change);
            }
        }
    }

    fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    fn into_vec(self) -> Vec<ChangeEvent> {
        self.list
    }

    /// The changes as one batch: a rescan covers everything else.
    fn into_batch(self) -> Vec<ChangeEvent> {
        if self.seen.contains(&ChangeEvent::Rescan) { vec![ChangeEvent::Rescan] } else { self.list }
    }
}
