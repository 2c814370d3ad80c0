//! The process-wide facts a build depends on, read from the real process.

use std::collections::BTreeMap;
use std::path::PathBuf;

/// Everything opencode reads from its process at start-up (the [`Host`] input's fields).
///
/// [`Host`]: ctxgraph_queries::Host
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostEnv {
    /// Environment variables (UTF-8 ones only; others cannot be JS strings).
    pub vars: BTreeMap<String, String>,
    /// `os.homedir()`.
    pub home: PathBuf,
    /// node's `process.platform`.
    pub platform: String,
    /// `Date.toDateString()` when the engine is made (see [`crate::Engine::with_clock`]).
    pub date: String,
}

impl HostEnv {
    /// This process's environment, home, platform and local date.
    pub fn from_process() -> Self {
        // Variables that are not UTF-8 cannot be JS strings; opencode never sees them.
        let vars: BTreeMap<String, String> = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect();
        let home = vars
            .get("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .or_else(std::env::home_dir)
            .unwrap_or_else(|| PathBuf::from("/"));
        Self { vars, home, platform: node_platform().to_owned(), date: local_date_string() }
    }
}

impl HostEnv {
    /// Where ctxgraph caches remote documents: `$XDG_CACHE_HOME/ctxgraph/remote`, or
    /// `~/.cache/ctxgraph/remote`.
    pub fn remote_cache_dir(&self) -> PathBuf {
        let base = match self.vars.get("XDG_CACHE_HOME") {
            Some(dir) if !dir.is_empty() => PathBuf::from(dir),
            _ => self.home.join(".cache"),
        };
        base.join("ctxgraph").join("remote")
    }
}

/// Where the engine reads today's date from. opencode formats `new Date()` on every model
/// step, so an engine that lives past midnight must read its clock per build, not once.
pub trait Clock: Send + Sync {
    /// `Date.toDateString()` for now, e.g. `Sun Nov 29 2026`.
    fn today(&self) -> String;
}

/// The local wall clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn today(&self) -> String {
        local_date_string()
    }
}

/// node's `process.platform` for this build target.
pub fn node_platform() -> &'static str {
    match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        other => other,
    }
}

/// `new Date().toDateString()` in the local time zone, e.g. `Sun Nov 29 2026`.
pub fn local_date_string() -> String {
    jiff::Zoned::now().strftime("%a %b %d %Y").to_string()
}
