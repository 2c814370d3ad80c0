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

/// Written once an install is complete. npm links the executable before it has finished
/// writing the package, so a test that saw the link alone could read a half-written binary.
fn marker(cache: &Path) -> PathBuf {
    cache.join(format!(".installed-opencode-ai-{VERSION}"))
}

fn install_once(cache: &Path) -> PathBuf {
    if marker(cache).exists()
        && let Some(bin) = executable(cache)
    {
        return bin;
    }
    std::fs::create_dir_all(cache).unwrap_or_else(|err| panic!("create {}: {err}", cache.display()));
    let lock_path = cache.join(".install.lock");
    let file = std::fs::File::create(&lock_path)
        .unwrap_or_else(|err| panic!("create {}: {err}", lock_path.display()));
    let mut lock = fd_lock::RwLock::new(file);
    let _guard = lock.write().unwrap_or_else(|err| panic!("lock {}: {err}", lock_path.display()));
    // Another test binary, or `oracle_bin`, may have installed it while this one waited for
    // the lock: an install holds the lock until it is complete.
    if executable(cache).is_none() {
        npm_install(cache);
    }
    let bin = executable(cache).unwrap_or_else(|| {
        panic!(
            "npm installed opencode-ai@{VERSION} into {} but no opencode executable is there",
            cache.display()
        )
    });
    std::fs::write(marker(cache), "")
        .unwrap_or_else(|err| panic!("write {}: {err}", marker(cache).display()));
    bin
}

fn npm_install(cache: &Path) {
    let manifest = cache.join("package.json");
    if !manifest.exists() {
        std::fs::write(&manifest, "{\"name\":\"ctxgraph-oracle\",\"private\":true}\n")
            .unwrap_or_else(|err| panic!("write {}: {err}", manifest.display()));
    }
    let package = format!("opencode-ai@{VERSION}");
    // npm's own fetch timeouts bound this; its output is kept for the failure message only.
    let output = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--no-progress", &package])
        .current_dir(cache)
        .output()
        .unwrap_or_else(|err| {
            panic!(
                "this test needs {package}, and installing it needs npm (Node.js), which could not be run: {err}. \
                 Install Node.js, or set CTXGRAPH_TEST_OPENCODE to an opencode {VERSION} executable"
            )
        });
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(15).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        panic!(
            "this test needs {package}: `npm install {package}` in {} failed ({}); is the npm registry reachable? \
             Set CTXGRAPH_TEST_OPENCODE to an opencode {VERSION} executable to skip the install.\nnpm said:\n{}",
            cache.display(),
            output.status,
            tail.join("\n")
        );
    }
}
