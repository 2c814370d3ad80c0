//! Debian packages a test drives for real (`chromium` for the report page, `neovim` for the
//! language server): installed with `apt-get` the first time a test needs one, once per
//! machine. One advisory lock for every package: apt holds its own locks on the package lists
//! and dpkg's database and fails at once when another apt-get has them, so two test threads
//! (or binaries) installing two packages must take turns.

use std::path::PathBuf;
use std::process::{Command, Stdio};

const LOCK: &str = "/tmp/ctxgraph-apt-install.lock";

/// The first of `paths` that exists.
fn find(paths: &[&str]) -> Option<PathBuf> {
    paths.iter().map(PathBuf::from).find(|path| path.is_file())
}

fn apt_get(args: &[&str]) -> Result<(), String> {
    let output = Command::new("apt-get")
        .args(args)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .stdin(Stdio::null())
        .output()
        .map_err(|err| format!("apt-get could not be run: {err}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!("apt-get {} failed: {}", args.join(" "), String::from_utf8_lossy(&output.stderr)))
    }
}

/// The executable Debian's `package` puts at the first of `paths`, installing the package
/// first when none of them exists.
///
/// # Panics
/// When it is neither there nor installable (not root, no Debian package index reachable):
/// the test must fail, saying why, never pass by skipping.
pub fn installed(package: &str, paths: &[&str]) -> PathBuf {
    if let Some(found) = find(paths) {
        return found;
    }
    let file = std::fs::File::create(LOCK).unwrap_or_else(|err| panic!("create {LOCK}: {err}"));
    let mut lock = fd_lock::RwLock::new(file);
    let _guard = lock.write().unwrap_or_else(|err| panic!("lock {LOCK}: {err}"));
    // Installed by another test while this one waited for the lock.
    if let Some(found) = find(paths) {
        return found;
    }
    // A fresh machine's package lists may be empty or old: update them only when the
    // install alone fails. The timeout waits for an apt run that is not a test's (an
    // unattended upgrade) instead of failing.
    let install = ["install", "-y", "--no-install-recommends", "-o", "DPkg::Lock::Timeout=600", package];
    let installed = apt_get(&install).or_else(|_| {
        apt_get(&["update", "-o", "DPkg::Lock::Timeout=600"])?;
        apt_get(&install)
    });
    if let Err(why) = installed {
        panic!("this test drives Debian's {package}, which is not installed and could not be: {why}");
    }
    find(paths).unwrap_or_else(|| panic!("apt-get installed {package} but none of {paths:?} exists"))
}

/// Neovim's `nvim`, the real LSP client `ctxgraph lsp` is tested with.
pub fn nvim() -> PathBuf {
    installed("neovim", &["/usr/bin/nvim"])
}

/// Chromium, the real browser the report page is tested in.
pub fn chromium() -> PathBuf {
    installed("chromium", &["/usr/bin/chromium", "/usr/bin/chromium-browser"])
}
