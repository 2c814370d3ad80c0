//! The real Aider 0.86.2 package (`aider-chat` from the Python package index) for tests that read its wording
//! (AI9). Installed into a virtual environment in the cache once, under the lock every test
//! binary shares ([`crate::opencode::installed_once`]); never executed: the tests only read
//! its files (Aider itself runs only inside the oracle scripts' network namespace).

use std::path::{Path, PathBuf};

/// The release the wording table and the recordings are pinned to.
pub const VERSION: &str = "0.86.2";

/// The `aider` launcher pip wrote: `$CTXGRAPH_TEST_AIDER` when set (used as is), else
/// `$ORACLE_CACHE/aider/bin/aider` (`ORACLE_CACHE` defaulting to `/tmp/oracle`), installing
/// `aider-chat==VERSION` there first when it is missing.
///
/// # Panics
/// When the package is neither there nor installable (no `python3` with `venv`, the index
/// unreachable): such a test must fail, saying why and how to provide it, never pass silently.
pub fn installed() -> PathBuf {
    if let Some(path) = std::env::var_os("CTXGRAPH_TEST_AIDER") {
        let path = PathBuf::from(path);
        assert!(path.exists(), "CTXGRAPH_TEST_AIDER names {}, which does not exist", path.display());
        return path;
    }
    let cache = PathBuf::from(std::env::var_os("ORACLE_CACHE").unwrap_or_else(|| "/tmp/oracle".into()));
    let venv = cache.join("aider");
    let marker = cache.join(format!(".installed-aider-chat-{VERSION}"));
    crate::opencode::installed_once(&cache, &marker, launcher, &format!("aider-chat=={VERSION}"), || {
        pip_install(&venv);
    })
}

/// The launcher, once the package's files are there too.
fn launcher(cache: &Path) -> Option<PathBuf> {
    let venv = cache.join("aider");
    let bin = venv.join("bin/aider");
    let package = std::fs::read_dir(venv.join("lib"))
        .ok()?
        .filter_map(Result::ok)
        .any(|entry| entry.path().join("site-packages/aider/coders/base_prompts.py").is_file());
    (bin.is_file() && package).then_some(bin)
}

fn pip_install(venv: &Path) {
    // Only the package's own files are read: its dependencies are not needed.
    crate::pip::install(venv, &format!("aider-chat=={VERSION}"), false, "CTXGRAPH_TEST_AIDER");
}
