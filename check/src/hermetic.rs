//! The world a scenario runs in: the repository, and nothing else from the machine.
//!
//! Two fences. The environment is built from the scenario alone (never from this
//! process): `HOME` is the scenario's home or a path that does not exist, the managed
//! config dir (C3.8) points nowhere, and `XDG_CONFIG_HOME` is set only when the scenario
//! names a global config dir. And the file system is [`JailSystem`]: every path outside
//! `<repo>` reads as missing, so an absolute `instructions` entry, a `~/` entry, a symlink
//! out of the repository or `/etc/opencode` cannot reach the machine either. There is no
//! network: the engine fetches nothing for a scenario.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use ctxgraph_db::path;
use ctxgraph_db::system::{DirEntry, FileKind, System};
use ctxgraph_engine::{HostEnv, OsSystem};

use crate::scenarios::Scenario;

/// `OPENCODE_TEST_MANAGED_CONFIG_DIR` for every scenario (the jail hides `/etc/opencode`
/// anyway; this keeps the managed layer out even of the facts `explain` would show).
pub const NO_MANAGED_DIR: &str = "/nonexistent/ctxgraph-scenario/managed";

/// The process-wide inputs of a scenario, built from the scenario only.
pub fn host_env(scenario: &Scenario) -> HostEnv {
    let home = scenario.home_or_none();
    let mut vars = BTreeMap::new();
    vars.insert("HOME".to_owned(), path::display(&home));
    vars.insert("OPENCODE_TEST_MANAGED_CONFIG_DIR".to_owned(), NO_MANAGED_DIR.to_owned());
    if let Some(parent) = scenario.config_dir.as_deref().and_then(Path::parent) {
        vars.insert("XDG_CONFIG_HOME".to_owned(), path::display(parent));
    }
    // The scenario's own flags last: it may point the managed dir into the repository.
    vars.extend(scenario.env.clone());
    HostEnv { vars, home, platform: scenario.platform.to_owned(), date: scenario.date.clone() }
}

/// The real file system seen through a window: only paths under `root` (after following
/// symlinks) exist.
#[derive(Debug)]
pub struct JailSystem {
    inner: OsSystem,
    root: PathBuf,
}

impl JailSystem {
    /// `root` must be canonical (the engine canonicalises working directories, so the
    /// paths the queries ask about start with the canonical root).
    pub fn new(root: PathBuf) -> Self {
        Self { inner: OsSystem, root }
    }

    fn admits(&self, path: &Path) -> bool {
        if !path.starts_with(&self.root) {
            return false;
        }
        match std::fs::canonicalize(path) {
            Ok(real) => real.starts_with(&self.root),
            // Missing, a loop, no permission: the inner system reports the same failure.
            Err(_) => true,
        }
    }

    fn not_found() -> io::Error {
        io::Error::from(io::ErrorKind::NotFound)
    }
}

impl System for JailSystem {
    fn kind(&self, path: &Path) -> FileKind {
        if self.admits(path) { self.inner.kind(path) } else { FileKind::Missing }
    }

    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        if self.admits(path) { self.inner.read(path) } else { Err(Self::not_found()) }
    }

    fn read_dir(&self, path: &Path) -> io::Result<Vec<DirEntry>> {
        if self.admits(path) { self.inner.read_dir(path) } else { Err(Self::not_found()) }
    }

    fn kind_and_change(&self, path: &Path) -> (FileKind, Option<std::time::SystemTime>) {
        if self.admits(path) { self.inner.kind_and_change(path) } else { (FileKind::Missing, None) }
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        let real = self.inner.canonicalize(path)?;
        if real.starts_with(&self.root) { Ok(real) } else { Err(Self::not_found()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_outside_the_root_exists() {
        let outside = tempfile::tempdir().expect("temp dir");
        let repo = tempfile::tempdir().expect("temp dir");
        let outside = std::fs::canonicalize(outside.path()).expect("canonical");
        let root = std::fs::canonicalize(repo.path()).expect("canonical");
        std::fs::write(outside.join("secret.md"), "secret").expect("write");
        std::fs::write(root.join("AGENTS.md"), "rule").expect("write");
        #[cfg(unix)]
        std::os::unix::fs::symlink(&outside, root.join("escape")).expect("symlink");
        let jail = JailSystem::new(root.clone());

        assert_eq!(jail.kind(&root.join("AGENTS.md")), FileKind::File);
        assert_eq!(jail.read(&root.join("AGENTS.md")).expect("inside"), b"rule");
        assert_eq!(jail.kind(&outside.join("secret.md")), FileKind::Missing);
        assert_eq!(jail.read(&outside.join("secret.md")).map_err(|e| e.kind()), Err(io::ErrorKind::NotFound));
        assert_eq!(jail.kind(Path::new("/etc")), FileKind::Missing);
        assert!(jail.canonicalize(&outside).is_err());
        #[cfg(unix)]
        {
            assert_eq!(jail.kind(&root.join("escape/secret.md")), FileKind::Missing);
            assert!(jail.read_dir(&root.join("escape")).is_err());
            // The link itself is listed (readdir does not follow it); it leads nowhere.
            let names: Vec<String> =
                jail.read_dir(&root).expect("list").into_iter().map(|e| e.name.to_string()).collect();
            assert!(names.contains(&"escape".to_owned()));
        }
    }
}
