//! One fixed directory for tests whose output depends on where they run.
//!
//! Rule blocks start with their path (`Instructions from: <path>`), so token counts are
//! reproducible only from one fixed path: a random temp dir would change them from run to
//! run. The sandbox is shared by every checkout on the machine, so it is locked.

use std::path::{Path, PathBuf};

/// Runs `run` holding the sandbox at `dir` (an advisory `flock`, released on exit even
/// after a crash; `fd-lock` because `File::lock` is newer than our MSRV). `run` gets the
/// directory, created if needed; what it leaves there is the next holder's to clear.
pub fn with_sandbox<T>(dir: &Path, run: impl FnOnce(&Path) -> T) -> T {
    std::fs::create_dir_all(dir).expect("sandbox dir");
    let file = std::fs::File::create(dir.join("lock")).expect("sandbox lock file");
    let mut lock = fd_lock::RwLock::new(file);
    let _guard = lock.write().expect("lock the sandbox");
    run(dir)
}

/// Empties `dir` (if it exists) and creates it again.
pub fn fresh_dir(dir: &Path) -> PathBuf {
    if dir.exists() {
        std::fs::remove_dir_all(dir).unwrap_or_else(|err| panic!("clear {}: {err}", dir.display()));
    }
    std::fs::create_dir_all(dir).unwrap_or_else(|err| panic!("create {}: {err}", dir.display()));
    dir.to_path_buf()
}
