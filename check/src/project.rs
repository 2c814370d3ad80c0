//! A loaded scenarios file, and the three things done with it: snapshot, check, accept.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ctxgraph_engine::atomic;
use ctxgraph_engine::{Engine, EngineError, HostEnv, OsSystem};
use serde::Serialize;

use crate::compare::{Change, compare};
use crate::portable::Placeholders;
use crate::render::render;
use crate::scenarios::{self, Anchor, Scenario, ScenariosError};
use crate::snapshot::{self, Stored};

/// P5 from `dir`: the nearest directory above it with a git entry, or `dir` itself outside
/// git. Computed by the same query the prompt uses, over the real file system.
pub fn worktree_root(dir: &Path) -> PathBuf {
    let env = HostEnv {
        vars: std::collections::BTreeMap::default(),
        home: PathBuf::from("/"),
        platform: "linux".to_owned(),
        date: String::new(),
    };
    let mut engine = Engine::new(Arc::new(OsSystem), env);
    match engine.open(dir) {
        Ok(ws) => {
            let worktree = engine.worktree(ws);
            if worktree.is_git() { worktree.root } else { engine.cwd(ws).to_path_buf() }
        }
        Err(_) => dir.to_path_buf(),
    }
}

/// The nearest scenarios file from `start` up to its worktree root.
pub fn locate(start: &Path) -> Result<PathBuf, ScenariosError> {
    let start = std::fs::canonicalize(start).unwrap_or_else(|_| start.to_path_buf());
    let root = worktree_root(&start);
    start
        .ancestors()
        .take_while(|dir| dir.starts_with(&root))
        .map(|dir| dir.join(crate::SCENARIOS_FILE))
        .find(|file| file.is_file())
        .ok_or(ScenariosError::NotFound { start: start.clone(), root })
}

/// A loaded scenarios file and the repository it pins prompts for.
pub struct Project {
    /// The scenarios file.
    pub file: PathBuf,
    /// Its directory (canonical).
    pub base: PathBuf,
    /// `<repo>` (canonical).
    pub repo: PathBuf,
    /// Its scenarios, in file order.
    pub scenarios: Vec<Scenario>,
}

/// One scenario's result in `check`.
#[derive(Debug, Serialize)]
pub struct ScenarioReport {
    /// The scenario's name, as in the scenarios file.
    pub name: String,
    /// The snapshot file, relative to `<repo>`.
    pub snapshot: String,
    /// How the current prompt compares with the snapshot.
    pub status: Status,
    /// Whether this scenario fails the check.
    pub failed: bool,
    /// The current prompt's token count (`o200k_base`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<usize>,
    /// What differs from the snapshot, when it differs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change: Option<Change>,
    /// Something a reviewer should know beyond the diff.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// A `.snap.new` written for `check --accept`, relative to `<repo>`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending: Option<String>,
    /// Why the scenario could not be checked, when it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The build failure behind `error`, kept whole for the CLI's diagnostic rendering.
    #[serde(skip)]
    pub engine_error: Option<EngineError>,
}

/// How a scenario's current prompt stands against its snapshot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// The prompt is the snapshot's body, byte for byte.
    Match,
    /// The prompt differs from the snapshot's body.
    Changed,
    /// No snapshot yet.
    Missing,
    /// The snapshot file is not one (no usable header).
    Invalid,
    /// The scenario cannot be built (its config is broken).
    Error,
}

/// The result of `ctxgraph check`: one report per scenario.
#[derive(Debug, Serialize)]
pub struct CheckReport {
    /// Each scenario's result, in file order.
    pub scenarios: Vec<ScenarioReport>,
}

impl CheckReport {
    /// No scenario fails the check.
    pub fn passed(&self) -> bool {
        self.scenarios.iter().all(|s| !s.failed)
    }

    /// A scenario could not be built at all: bad input rather than a changed prompt.
    pub fn has_errors(&self) -> bool {
        self.scenarios.iter().any(|s| s.status == Status::Error)
    }
}

/// A snapshot `ctxgraph snapshot` wrote.
#[derive(Debug)]
pub struct Written {
    /// The scenario it belongs to.
    pub name: String,
    /// The snapshot file, relative to `<repo>`.
    pub path: String,
    /// The pinned prompt's token count (`o200k_base`).
    pub tokens: usize,
}

/// A pending `.snap.new` that `ctxgraph check --accept` made the snapshot.
#[derive(Debug)]
pub struct Accepted {
    /// The scenario it belongs to.
    pub name: String,
    /// The snapshot file, relative to `<repo>`.
    pub path: String,
}

impl Project {
    /// Reads and validates a scenarios file; its directory and worktree root anchor the paths.
    pub fn load(file: &Path) -> Result<Self, ScenariosError> {
        let read_error = |source| ScenariosError::Read { path: file.to_path_buf(), source };
        let bytes = ctxgraph_engine::read_regular_file(file).map_err(read_error)?;
        let text = String::from_utf8(bytes)
            .map_err(|_| read_error(std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8")))?;
        let parent = file.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let base = std::fs::canonicalize(parent).map_err(read_error)?;
        let repo = worktree_root(&base);
        let scenarios = scenarios::parse(&text, &Anchor { file, base: &base, repo: &repo })?;
        Ok(Self { file: file.to_path_buf(), base, repo, scenarios })
    }

    /// Where this project's snapshots live, next to the scenarios file.
    pub fn snapshot_dir(&self) -> PathBuf {
        self.base.join(crate::SNAPSHOT_DIR)
    }

    /// The snapshot directory, once it is known to resolve inside `<repo>`: a
    /// `.ctxgraph/snapshots` (or `.ctxgraph`) symlinked elsewhere would make `snapshot`
    /// write, and `check` read, outside the repository. The deepest part of the path that
    /// exists decides where the rest would be created.
    fn confined_snapshot_dir(&self) -> Result<PathBuf, SnapshotFailure> {
        let dir = self.snapshot_dir();
        let existing = dir.ancestors().find(|p| p.symlink_metadata().is_ok()).unwrap_or(&dir);
        self.confine(existing)?;
        Ok(dir)
    }

    /// Refuses `path` (which exists, maybe as a symlink) unless it resolves inside `<repo>`.
    fn confine(&self, path: &Path) -> Result<(), SnapshotFailure> {
        let outside = |target: String| SnapshotFailure::OutsideRepository {
            path: path.to_path_buf(),
            target,
            repo: self.repo.clone(),
        };
        match std::fs::canonicalize(path) {
            Ok(real) if real.starts_with(&self.repo) => Ok(()),
            Ok(real) => Err(outside(format!("it resolves to {}", real.display()))),
            Err(err) => Err(outside(format!("it cannot be resolved: {err}"))),
        }
    }

    /// The directory to write snapshots in, with the temporary files a killed run left
    /// there removed.
    fn writable_snapshot_dir(&self) -> Result<PathBuf, SnapshotFailure> {
        let dir = self.confined_snapshot_dir()?;
        atomic::sweep(&dir);
        Ok(dir)
    }

    /// A path as shown to users and CI: relative to `<repo>`.
    pub fn relative(&self, path: &Path) -> String {
        path.strip_prefix(&self.repo).unwrap_or(path).to_string_lossy().into_owned()
    }

    /// The named scenarios (all when `names` is empty), sorted by name.
    pub fn select(&self, names: &[String]) -> Result<Vec<&Scenario>, ScenariosError> {
        if let Some(unknown) = names.iter().find(|n| !self.scenarios.iter().any(|s| &s.name == *n)) {
            return Err(ScenariosError::UnknownScenario {
                path: self.file.clone(),
                name: unknown.clone(),
                known: self.scenarios.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(", "),
            });
        }
        Ok(self.scenarios.iter().filter(|s| names.is_empty() || names.contains(&s.name)).collect())
    }

    /// Builds the scenarios and writes their snapshots (dropping pending `.snap.new`s).
    /// Nothing is written unless every scenario builds.
    pub fn snapshot(&self, names: &[String]) -> Result<Vec<Written>, SnapshotFailure> {
        let mut results = Vec::new();
        for scenario in self.select(names)? {
            let rendered = render(scenario, &self.repo)
                .map_err(|error| SnapshotFailure::Build { scenario: scenario.name.clone(), error })?;
            results.push((scenario, rendered));
        }
        let dir = self.writable_snapshot_dir()?;
        let mut written = Vec::new();
        for (scenario, rendered) in results {
            let path = snapshot::snap_path(&dir, &scenario.name);
            let io = |source| SnapshotFailure::Write { path: path.clone(), source };
            snapshot::write_atomic(&path, snapshot::encode(scenario, &rendered).as_bytes()).map_err(io)?;
            snapshot::remove_if_present(&snapshot::pending_path(&dir, &scenario.name)).map_err(io)?;
            written.push(Written {
                name: scenario.name.clone(),
                path: self.relative(&path),
                tokens: crate::count_tokens(&rendered.body),
            });
        }
        Ok(written)
    }

    /// Rebuilds the scenarios and compares them with their snapshots. Outside CI, a
    /// result that differs or has no snapshot is written as `.snap.new`; in CI nothing
    /// is written and a missing snapshot fails.
    pub fn check(&self, names: &[String], ci: bool) -> Result<CheckReport, SnapshotFailure> {
        let dir = if ci { self.confined_snapshot_dir()? } else { self.writable_snapshot_dir()? };
        let mut reports = Vec::new();
        for scenario in self.select(names)? {
            let snap = snapshot::snap_path(&dir, &scenario.name);
            let pending = snapshot::pending_path(&dir, &scenario.name);
            let mut report = ScenarioReport {
                name: scenario.name.clone(),
                snapshot: self.relative(&snap),
                status: Status::Match,
                failed: false,
                tokens: None,
                change: None,
                note: None,
                pending: None,
                error: None,
                engine_error: None,
            };
            let rendered = match render(scenario, &self.repo) {
                Ok(rendered) => rendered,
                Err(error) => {
                    let home = scenario.home_or_none();
                    report.status = Status::Error;
                    report.failed = true;
                    report.error = Some(Placeholders::new(&self.repo, &home).apply(&error.to_string()));
                    report.engine_error = Some(error);
                    reports.push(report);
                    continue;
                }
            };
            report.tokens = Some(crate::count_tokens(&rendered.body));
            let write_error = |source| SnapshotFailure::Write { path: pending.clone(), source };
            match self.read_stored(&snap)? {
                Ok(Some(stored)) => {
                    let labels =
                        (format!("{} (snapshot)", report.snapshot), format!("{} (current)", scenario.name));
                    match compare(&stored, &rendered, (&labels.0, &labels.1)) {
                        None if stored.intact => {}
                        None => {
                            report.status = Status::Changed;
                            report.note = Some(hash_note());
                        }
                        Some(change) => {
                            report.status = Status::Changed;
                            if !stored.intact {
                                report.note = Some(hash_note());
                            } else if change.reordered {
                                report.note = Some("the same blocks, in another order".to_owned());
                            }
                            report.change = Some(change);
                        }
                    }
                }
                Ok(None) => report.status = Status::Missing,
                Err(reason) => {
                    report.status = Status::Invalid;
                    report.note = Some(reason);
                }
            }
            report.failed = match report.status {
                Status::Match => false,
                Status::Missing => ci,
                Status::Changed | Status::Invalid | Status::Error => true,
            };
            if report.status == Status::Match {
                snapshot::remove_if_present(&pending).map_err(write_error)?;
            } else if !ci {
                snapshot::write_atomic(&pending, snapshot::encode(scenario, &rendered).as_bytes())
                    .map_err(write_error)?;
                report.pending = Some(self.relative(&pending));
            }
            reports.push(report);
        }
        Ok(CheckReport { scenarios: reports })
    }

    /// Turns pending `.snap.new` files of the named scenarios into snapshots.
    pub fn accept(&self, names: &[String]) -> Result<Vec<Accepted>, SnapshotFailure> {
        let dir = self.writable_snapshot_dir()?;
        let mut accepted = Vec::new();
        for scenario in self.select(names)? {
            let pending = snapshot::pending_path(&dir, &scenario.name);
            if !pending.is_file() {
                continue;
            }
            let snap = snapshot::snap_path(&dir, &scenario.name);
            std::fs::rename(&pending, &snap)
                .map_err(|source| SnapshotFailure::Write { path: snap.clone(), source })?;
            accepted.push(Accepted { name: scenario.name.clone(), path: self.relative(&snap) });
        }
        Ok(accepted)
    }

    /// `Ok(None)` when there is no snapshot; `Ok(Err(reason))` when the file is not one.
    /// A snapshot symlinked out of the repository is refused before it is opened.
    fn read_stored(&self, path: &Path) -> Result<Result<Option<Stored>, String>, SnapshotFailure> {
        match path.symlink_metadata() {
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Ok(None)),
            Err(err) => return Ok(Err(format!("cannot read the snapshot: {err}"))),
            Ok(_) => self.confine(path)?,
        }
        // Never opens a FIFO or a device for a blocking read: it could block or never end.
        let bytes = match ctxgraph_engine::read_regular_file(path) {
            Ok(bytes) => bytes,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Ok(None)),
            Err(err) => return Ok(Err(format!("cannot read the snapshot: {err}"))),
        };
        let Ok(text) = String::from_utf8(bytes) else {
            return Ok(Err("the snapshot is not UTF-8".to_owned()));
        };
        Ok(snapshot::decode(&text).map(Some).map_err(|err| err.to_string()))
    }
}

fn hash_note() -> String {
    "the snapshot's body does not match the blake3 in its header: it was edited after it was written (an editor adding a final newline?)".to_owned()
}

/// Why `snapshot`, `check` or `accept` stopped.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotFailure {
    /// The scenarios file is missing or invalid.
    #[error(transparent)]
    Scenarios(#[from] ScenariosError),
    #[error("scenario {scenario}: {error}")]
    /// A scenario's prompt could not be built.
    Build {
        /// The scenario's name.
        scenario: String,
        /// Why the build failed.
        error: EngineError,
    },
    #[error("cannot write {}: {source}", path.display())]
    /// A snapshot file could not be written.
    Write {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A snapshot path that leads out of the repository (a symlink): refused, never
    /// followed.
    #[error(
        "{} leads outside the repository ({target}); ctxgraph reads and writes snapshots only inside {}",
        path.display(),
        repo.display()
    )]
    OutsideRepository {
        /// The snapshot path.
        path: PathBuf,
        /// Where it leads, as the link says.
        target: String,
        /// The repository it must stay inside.
        repo: PathBuf,
    },
}
