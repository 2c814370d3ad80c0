//! The real opencode 1.18.33 installation for tests that need opencode's own texts.
//!
//! A fresh clone's `cargo test --workspace` must pass with nothing preinstalled, so the first
//! test that needs opencode installs it from the npm registry into a cache and every later
//! one (in any test binary, any checkout on the machine) finds it there. Test binaries run in
//! parallel: the install is serialised by an advisory lock in the cache directory, shared
//! with `tests/oracle/lib.sh`'s `oracle_bin`, and whoever gets the lock second finds the work
//! done.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The release the texts table and the recordings are pinned to.
pub const VERSION: &str = "1.18.33";

/// The `opencode` executable npm installed: `$CTXGRAPH_TEST_OPENCODE` when set (used as is),
/// else `$ORACLE_CACHE/node_modules/.bin/opencode` (`ORACLE_CACHE` defaulting to
/// `/tmp/oracle`), installing `opencode-ai@VERSION` there first when it is missing.
///
/// # Panics
/// When opencode is neither there nor installable (no `npm`, the registry unreachable): such
/// a test must fail, saying why and how to provide it, never pass silently.
pub fn installed() -> PathBuf {
    if let Some(path) = std::env::var_os("CTXGRAPH_TEST_OPENCODE") {
        let path = PathBuf::from(path);
        assert!(path.exists(), "CTXGRAPH_TEST_OPENCODE names {}, which does not exist", path.display());
        return path;
    }
    let cache = PathBuf::from(std::env::var_os("ORACLE_CACHE").unwrap_or_else(|| "/tmp/oracle".into()));
    install_once(&cache)
}

/// The launcher npm links; opencode-ai's own executable when install scripts did not run
/// (npm 11 skips them unless approved), which the installation reader follows just the same.
fn executable(cache: &Path) -> Option<PathBuf> {
    ["node_modules/.bin/opencode", "node_modules/opencode-linux-x64/bin/opencode"]
        .into_iter()
        .map(|relative| cache.join(relative))
        .find(|path| path.is_file())
}

fn install_once(cache: &Path) -> PathBuf {
    let package = NpmPackage {
        spec: format!("opencode-ai@{VERSION}"),
        find: executable,
        override_env: "CTXGRAPH_TEST_OPENCODE",
        what: format!("an opencode {VERSION} executable"),
        ignore_scripts: false,
    };
    package.installed_in(cache)
}

/// An npm package a test needs, installed once per cache directory under a lock.
pub struct NpmPackage {
    /// `name@version`.
    pub spec: String,
    /// The file the test uses, once installed.
    pub find: fn(&Path) -> Option<PathBuf>,
    /// The variable that points the tests at an installation instead.
    pub override_env: &'static str,
    /// What that variable names, for the failure message.
    pub what: String,
    /// Install without running the packages' scripts.
    pub ignore_scripts: bool,
}

impl NpmPackage {
    /// Written once an install is complete. npm links the executable before it has
    /// finished writing the package, so a test that saw the link alone could read a
    /// half-written binary.
    fn marker(&self, cache: &Path) -> PathBuf {
        cache.join(format!(".installed-{}", self.spec.replace(['/', '@'], "-").trim_start_matches('-')))
    }

    /// The package's file in `cache`, installing it there first (serialised by an advisory
    /// lock in the cache, shared with `tests/oracle/lib.sh`'s `oracle_bin`) when missing.
    ///
    /// # Panics
    /// When it is neither there nor installable (no `npm`, the registry unreachable).
    pub fn installed_in(&self, cache: &Path) -> PathBuf {
        installed_once(cache, &self.marker(cache), self.find, &self.spec, || self.npm_install(cache))
    }

    fn npm_install(&self, cache: &Path) {
        let manifest = cache.join("package.json");
        if !manifest.exists() {
            std::fs::write(&manifest, "{\"name\":\"ctxgraph-oracle\",\"private\":true}\n")
                .unwrap_or_else(|err| panic!("write {}: {err}", manifest.display()));
        }
        let package = &self.spec;
        let (env, what) = (self.override_env, &self.what);
        // npm's own fetch timeouts bound this; its output is kept for the failure message only.
        let mut args = vec!["install", "--no-audit", "--no-fund", "--no-progress"];
        if self.ignore_scripts {
            args.push("--ignore-scripts");
        }
        args.push(package);
        let output = Command::new("npm")
            .args(&args)
            .current_dir(cache)
            .output()
            .unwrap_or_else(|err| {
                panic!(
                    "this test needs {package}, and installing it needs npm (Node.js), which could not be run: {err}. \
                     Install Node.js, or set {env} to {what}"
                )
            });
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let tail: Vec<&str> = stderr.lines().rev().take(15).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            panic!(
                "this test needs {package}: `npm install {package}` in {} failed ({}); is the npm registry reachable? \
                 Set {env} to {what} to skip the install.\nnpm said:\n{}",
                cache.display(),
                output.status,
                tail.join("\n")
            );
        }
    }
}

/// The file `find` names in `cache`, after `install` has run there once: serialised by an
/// advisory lock in the cache (shared with `tests/oracle/lib.sh`'s `oracle_bin`), completed
/// by `marker`. Any package manager's install goes through here (npm's, pip's).
///
/// # Panics
/// When the install leaves no such file (the install itself panics with its own reason).
pub fn installed_once(
    cache: &Path,
    marker: &Path,
    find: fn(&Path) -> Option<PathBuf>,
    spec: &str,
    install: impl FnOnce(),
) -> PathBuf {
    if marker.exists()
        && let Some(found) = find(cache)
    {
        return found;
    }
    std::fs::create_dir_all(cache).unwrap_or_else(|err| panic!("create {}: {err}", cache.display()));
    let lock_path = cache.join(".install.lock");
    let file = std::fs::File::create(&lock_path)
        .unwrap_or_else(|err| panic!("create {}: {err}", lock_path.display()));
    let mut lock = fd_lock::RwLock::new(file);
    let _guard = lock.write().unwrap_or_else(|err| panic!("lock {}: {err}", lock_path.display()));
    // Another test binary, or `oracle_bin`, may have installed it while this one waited
    // for the lock: an install holds the lock until it is complete.
    if find(cache).is_none() {
        install();
    }
    let found = find(cache).unwrap_or_else(|| {
        panic!("{spec} was installed into {} but the file the tests need is not there", cache.display())
    });
    std::fs::write(marker, "").unwrap_or_else(|err| panic!("write {}: {err}", marker.display()));
    found
}
