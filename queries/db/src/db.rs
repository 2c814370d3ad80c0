//! The inputs that describe the world a build runs in: the host process and each working
//! directory ([`Db`], the database trait, is the crate root's).

use std::collections::BTreeMap;
use std::path::PathBuf;

pub use crate::Db;

/// The process-wide facts opencode reads at start-up: environment variables, the OS home
/// directory, the platform and today's date. The engine reads them from the real process;
/// queries only ever see this input.
#[salsa::input(debug)]
pub struct Host {
    /// Environment variables, as given (never read from `std::env` by a query).
    #[returns(ref)]
    pub vars: BTreeMap<String, String>,
    /// `os.homedir()`: `$HOME` on POSIX when set.
    #[returns(ref)]
    pub home: PathBuf,
    /// node's `process.platform`: `linux`, `darwin`, `win32`.
    #[returns(ref)]
    pub platform: String,
    /// `Date.toDateString()` in the local time zone, e.g. `Sun Nov 29 2026`.
    #[returns(ref)]
    pub date: String,
}

/// One working directory opencode could be started in. Many can share one [`Host`].
#[salsa::input(debug)]
pub struct Workspace {
    /// The process facts this directory is built with.
    #[returns(copy)]
    pub host: Host,
    /// P4: the instance directory `D`, already canonicalised (realpath) by the engine.
    #[returns(ref)]
    pub cwd: PathBuf,
}

/// One environment variable. Keyed per name, so a change to an unrelated variable is
/// backdated here and invalidates nothing downstream.
#[salsa::tracked(returns(clone))]
pub fn env_var(db: &dyn Db, host: Host, name: String) -> Option<String> {
    host.vars(db).get(&name).cloned()
}
