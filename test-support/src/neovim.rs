//! Debian's `neovim`, the real LSP client `ctxgraph lsp` is tested with: installed with
//! `apt-get` the first time a test needs it, once per machine (an advisory lock serialises
//! the test binaries that ask at the same time).

use std::path::{Path, PathBuf};
use std::process::Command;

const LOCK: &str = "/tmp/ctxgraph-neovim-install.lock";

/// `nvim` on `PATH`, or in `/usr/bin` once installed.
fn find() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/bin")])
        .map(|dir| dir.join("nvim"))
        .find(|candidate| candidate.is_file())
}

fn apt_get(args: &[&str]) -> Result<(), String> {
    let output = Command::new("apt-get")
        .args(args)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .output()
        .map_err(|err| format!("apt-get could not be run: {err}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!("apt-get {} failed: {}", args.join(" "), String::from_utf8_lossy(&output.stderr)))
    }
}

/// The `nvim` executable, installing Debian's package first when there is none.
///
/// # Panics
/// When it is neither there nor installable (not root, no Debian package index reachable).
pub fn nvim() -> PathBuf {
    if let Some(found) = find() {
        return found;
    }
    let file = std::fs::File::create(LOCK).unwrap_or_else(|err| panic!("create {LOCK}: {err}"));
    let mut lock = fd_lock::RwLock::new(file);
    let _guard = lock.write().unwrap_or_else(|err| panic!("lock {LOCK}: {err}"));
    // Installed by another test binary while this one waited for the lock.
    if let Some(found) = find() {
        return found;
    }
    // A fresh machine's package lists may be empty or old: update them only when the
    // install alone fails.
    let installed = apt_get(&["install", "-y", "--no-install-recommends", "neovim"]).or_else(|_| {
        apt_get(&["update"])?;
        apt_get(&["install", "-y", "--no-install-recommends", "neovim"])
    });
    if let Err(why) = installed {
        panic!("this test drives Neovim, which is not installed and could not be: {why}");
    }
    find().unwrap_or_else(|| {
        panic!("apt-get installed neovim but no nvim is in {}", Path::new("/usr/bin").display())
    })
}
