//! The real pre-commit (from the Python package index) for the test of
//! `.pre-commit-hooks.yaml`: installed with its dependencies into a virtual environment in
//! the cache once, under the lock every test binary shares ([`crate::opencode::installed_once`]).

use std::path::{Path, PathBuf};

/// The release the test was written against.
pub const VERSION: &str = "4.7.0";

/// The `pre-commit` launcher: `$CTXGRAPH_TEST_PRECOMMIT` when set (used as is), else
/// `$ORACLE_CACHE/pre-commit/bin/pre-commit` (`ORACLE_CACHE` defaulting to `/tmp/oracle`),
/// installing `pre-commit==VERSION` there first when it is missing.
///
/// # Panics
/// When it is neither there nor installable: the test must fail saying why, never pass.
pub fn installed() -> PathBuf {
    if let Some(path) = std::env::var_os("CTXGRAPH_TEST_PRECOMMIT") {
        let path = PathBuf::from(path);
        assert!(path.exists(), "CTXGRAPH_TEST_PRECOMMIT names {}, which does not exist", path.display());
        return path;
    }
    let cache = PathBuf::from(std::env::var_os("ORACLE_CACHE").unwrap_or_else(|| "/tmp/oracle".into()));
    let marker = cache.join(format!(".installed-pre-commit-{VERSION}"));
    let spec = format!("pre-commit=={VERSION}");
    crate::opencode::installed_once(&cache, &marker, launcher, &spec, || {
        crate::pip::install(&cache.join("pre-commit"), &spec, true, "CTXGRAPH_TEST_PRECOMMIT");
    })
}

fn launcher(cache: &Path) -> Option<PathBuf> {
    let bin = cache.join("pre-commit/bin/pre-commit");
    bin.is_file().then_some(bin)
}
