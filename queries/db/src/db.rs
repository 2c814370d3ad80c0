//! The database trait and the inputs that describe the world a build runs in.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::files::Files;
use crate::remote::RemoteDocs;
use crate::system::System;

/// What every query can reach: the file system (only through [`System`]) and the side
/// tables that map paths to their [`File`](crate::files::File) inputs and URLs to their
/// [`RemoteDoc`](crate::remote::RemoteDoc) inputs.
#[salsa::db]
pub trait Db: salsa::Database {
    /// The file system, real or in memory: the only way a query reaches it.
    fn system(&self) -> &dyn System;
    /// The path → [`File`](crate::files::File) input table.
    fn files(&self) -> &Files;
    /// The URL → [`RemoteDoc`](crate::remote::RemoteDoc) input table.
    fn remotes(&self) -> &RemoteDocs;
    /// The opencode installation whose own texts the message contains (L1–L3).
    fn installation(&self) -> crate::installation::Installation;
}

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
