//! The real GitHub Copilot CLI 1.0.102 package for tests that read its wording (CP16).
//!
//! Installed from the npm registry into a cache once, under an advisory lock every test
//! binary shares, like [`crate::opencode`]. Nothing here runs Copilot: the tests only read
//! its files (the CLI itself runs only inside the oracle scripts' network namespace).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The release the wording table and the recordings are pinned to.
pub const VERSION: &str = "1.0.102";

/// The `copilot` launcher npm linked: `$CTXGRAPH_TEST_COPILOT` when set (used as is), else
/// `$ORACLE_CACHE/copilot/node_modules/.bin/copilot` (`ORACLE_CACHE` defaulting to
/// `/tmp/oracle`), installing `@github/copilot@VERSION` there first when it is missing.
///
/// # Panics
/// When the package is neither there nor installable (no `npm`, the registry unreachable):
/// such a test must fail, saying why and how to provide it, never pass silently.
pub fn installed() -> PathBuf {
    if let Some(path) = std::env::var_os("CTXGRAPH_TEST_COPILOT") {
        let path = PathBuf::from(path);
        assert!(path.exists(), "CTXGRAPH_TEST_COPILOT names {}, which does not exist", path.display());
        return path;
    }
    let cache = PathBuf::from(std::env::var_os("ORACLE_CACHE").unwrap_or_else(|| "/tmp/oracle".into()));
    install_once(&cache.join("copilot"))
}

fn launcher(cache: &Path) -> Option<PathBuf> {
    let bin = cache.join("node_modules/.bin/copilot");
    // The platform package is what holds the wording; the launcher alone is not enough.
    let platform =
        std::fs::read_dir(cache.join("node_modules/@github")).ok()?.filter_map(Result::ok).any(|e| {
            e.file_name().to_string_lossy().starts_with("copilot-") && e.path().join("package.json").is_file()
        });
    (bin.exists() && platform).then_some(bin)
}

/// Written once an install is complete (npm links the launcher before it has written the
/// packages).
fn marker(cache: &Path) -> PathBuf {
    cache.join(format!(".installed-github-copilot-{VERSION}"))
}

fn install_once(cache: &Path) -> PathBuf {
    if marker(cache).exists()
        && let Some(bin) = launcher(cache)
    {
        return bin;
    }
    std::fs::create_dir_all(cache).unwrap_or_else(|err| panic!("create {}: {err}", cache.display()));
    let lock_path = cache.join(".install.lock");
    let file = std::fs::File::create(&lock_path)
        .unwrap_or_else(|err| panic!("create {}: {err}", lock_path.display()));
    let mut lock = fd_lock::RwLock::new(file);
    let _guard = lock.write().unwrap_or_else(|err| panic!("lock {}: {err}", lock_path.display()));
    if !marker(cache).exists() || launcher(cache).is_none() {
        npm_install(cache);
    }
    let bin = launcher(cache).unwrap_or_else(|| {
        panic!(
            "npm installed @github/copilot@{VERSION} into {} but no launcher and platform package are there",
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
        std::fs::write(&manifest, "{\"name\":\"ctxgraph-oracle-copilot\",\"private\":true}\n")
            .unwrap_or_else(|err| panic!("write {}: {err}", manifest.display()));
    }
    let package = format!("@github/copilot@{VERSION}");
    // No install scripts: the package is only read. npm's own fetch timeouts bound this.
    let output = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--no-progress", "--ignore-scripts", &package])
        .current_dir(cache)
        .output()
        .unwrap_or_else(|err| {
            panic!(
                "this test needs {package}, and installing it needs npm (Node.js), which could not be run: {err}. \
                 Install Node.js, or set CTXGRAPH_TEST_COPILOT to a copilot {VERSION} launcher or executable"
            )
        });
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(15).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        panic!(
            "this test needs {package}: `npm install {package}` in {} failed ({}); is the npm registry reachable? \
             Set CTXGRAPH_TEST_COPILOT to skip the install.\nnpm said:\n{}",
            cache.display(),
            output.status,
            tail.join("\n")
        );
    }
}
