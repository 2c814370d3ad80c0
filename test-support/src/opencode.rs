//! The real opencode 1.18.33 installation for tests that need opencode's own texts.

use std::path::PathBuf;

/// The release the texts table and the recordings are pinned to.
pub const VERSION: &str = "1.18.33";

/// The `opencode` executable npm installed (`$CTXGRAPH_TEST_OPENCODE`, else
/// `$ORACLE_CACHE/node_modules/.bin/opencode`, `ORACLE_CACHE` defaulting to `/tmp/oracle`:
/// where `tests/oracle/lib.sh`'s `oracle_bin`, which `.ci/run` calls, installs it).
///
/// # Panics
/// When it is not there: such a test must fail, saying how to install it, never pass
/// silently.
pub fn installed() -> PathBuf {
    let path = match std::env::var_os("CTXGRAPH_TEST_OPENCODE") {
        Some(path) => PathBuf::from(path),
        None => PathBuf::from(std::env::var_os("ORACLE_CACHE").unwrap_or_else(|| "/tmp/oracle".into()))
            .join("node_modules/.bin/opencode"),
    };
    assert!(
        path.exists(),
        "this test needs opencode-ai@{VERSION} at {}: install it with \
         `. tests/oracle/lib.sh && oracle_bin` (.ci/run does), or set CTXGRAPH_TEST_OPENCODE",
        path.display()
    );
    path
}
