//! The real Qwen Code 0.24.4 package, for tests that need its own wording (the text of the
//! output-language file it writes). Installed from the npm registry once per cache, like
//! [`crate::opencode`]; never executed: tests only read its bundle.

use std::path::{Path, PathBuf};

use crate::opencode::NpmPackage;

/// The release the wording table and the recordings are pinned to.
pub const VERSION: &str = "0.24.4";

/// The installed package directory (`…/node_modules/@qwen-code/qwen-code`):
/// `$CTXGRAPH_TEST_QWEN_CODE` when set (used as is), else in `$ORACLE_CACHE/qwen-code`
/// (`ORACLE_CACHE` defaulting to `/tmp/oracle`), installed there first when missing.
pub fn installed() -> PathBuf {
    if let Some(path) = std::env::var_os("CTXGRAPH_TEST_QWEN_CODE") {
        let path = PathBuf::from(path);
        assert!(path.exists(), "CTXGRAPH_TEST_QWEN_CODE names {}, which does not exist", path.display());
        return path;
    }
    let cache = PathBuf::from(std::env::var_os("ORACLE_CACHE").unwrap_or_else(|| "/tmp/oracle".into()));
    let package = NpmPackage {
        spec: format!("@qwen-code/qwen-code@{VERSION}"),
        find: package_dir,
        override_env: "CTXGRAPH_TEST_QWEN_CODE",
        what: format!("an @qwen-code/qwen-code {VERSION} package directory"),
        ignore_scripts: true,
    };
    package.installed_in(&cache.join("qwen-code"))
}

fn package_dir(cache: &Path) -> Option<PathBuf> {
    let dir = cache.join("node_modules/@qwen-code/qwen-code");
    dir.join("package.json").is_file().then_some(dir)
}
