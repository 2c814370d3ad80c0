//! The real Auggie 0.36.0 package (`@augmentcode/auggie`), for tests that need its own wording (its
//! built-in rule). Installed from the npm registry once per cache, like
//! [`crate::opencode`]; never executed: tests only read its bundle.

use std::path::{Path, PathBuf};

use crate::opencode::NpmPackage;

/// The release the wording table and the recordings are pinned to.
pub const VERSION: &str = "0.36.0";

/// The installed package directory (`…/node_modules/@augmentcode/auggie`):
/// `$CTXGRAPH_TEST_AUGGIE` when set (used as is), else in `$ORACLE_CACHE/auggie`
/// (`ORACLE_CACHE` defaulting to `/tmp/oracle`), installed there first when missing.
pub fn installed() -> PathBuf {
    if let Some(path) = std::env::var_os("CTXGRAPH_TEST_AUGGIE") {
        let path = PathBuf::from(path);
        assert!(path.exists(), "CTXGRAPH_TEST_AUGGIE names {}, which does not exist", path.display());
        return path;
    }
    let cache = PathBuf::from(std::env::var_os("ORACLE_CACHE").unwrap_or_else(|| "/tmp/oracle".into()));
    let package = NpmPackage {
        spec: format!("@augmentcode/auggie@{VERSION}"),
        find: package_dir,
        override_env: "CTXGRAPH_TEST_AUGGIE",
        what: format!("an @augmentcode/auggie {VERSION} package directory"),
        ignore_scripts: true,
    };
    package.installed_in(&cache.join("auggie"))
}

fn package_dir(cache: &Path) -> Option<PathBuf> {
    let dir = cache.join("node_modules/@augmentcode/auggie");
    dir.join("package.json").is_file().then_some(dir)
}
