//! The real pi 0.73.1 package (`@mariozechner/pi-coding-agent`), for tests that need its own wording (its
//! base prompt and skills introduction). Installed from the npm registry once per cache, like
//! [`crate::opencode`]; never executed: tests only read its bundle.

use std::path::{Path, PathBuf};

use crate::opencode::NpmPackage;

/// The release the wording table and the recordings are pinned to.
pub const VERSION: &str = "0.73.1";

/// The installed package directory (`…/node_modules/@mariozechner/pi-coding-agent`):
/// `$CTXGRAPH_TEST_PI` when set (used as is), else in `$ORACLE_CACHE/pi`
/// (`ORACLE_CACHE` defaulting to `/tmp/oracle`), installed there first when missing.
pub fn installed() -> PathBuf {
    if let Some(path) = std::env::var_os("CTXGRAPH_TEST_PI") {
        let path = PathBuf::from(path);
        assert!(path.exists(), "CTXGRAPH_TEST_PI names {}, which does not exist", path.display());
        return path;
    }
    let cache = PathBuf::from(std::env::var_os("ORACLE_CACHE").unwrap_or_else(|| "/tmp/oracle".into()));
    let package = NpmPackage {
        spec: format!("@mariozechner/pi-coding-agent@{VERSION}"),
        find: package_dir,
        override_env: "CTXGRAPH_TEST_PI",
        what: format!("an @mariozechner/pi-coding-agent {VERSION} package directory"),
        ignore_scripts: true,
    };
    package.installed_in(&cache.join("pi"))
}

fn package_dir(cache: &Path) -> Option<PathBuf> {
    let dir = cache.join("node_modules/@mariozechner/pi-coding-agent");
    dir.join("package.json").is_file().then_some(dir)
}
