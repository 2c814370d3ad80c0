//! The process-wide facts a build depends on, read from the real process.

use std::collections::BTreeMap;
use std::path::PathBuf;

/// Everything opencode reads from its process at start-up (the [`Host`] input's fields).
///
/// [`Host`]: ctxgraph_db::Host
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

#[cfg(feature = "testing")]
impl HostEnv {
    /// The host every test builds under (the `testing` feature): `HOME` (and no other
    /// variable), linux, and the date `Sun Nov 29 2026`, so that the environment block is the
    /// same on every machine and every day.
    pub fn fixed(home: impl Into<PathBuf>) -> Self {
        let home = home.into();
        let vars = BTreeMap::from([("HOME".to_owned(), home.display().to_string())]);
        Self { vars, home, platform: "linux".to_owned(), date: "Sun Nov 29 2026".to_owned() }
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

/// The local wall clock. The date is formatted once per day: asked on every request of a
/// server, reading the time zone and formatting cost more than the rest of an unchanged
/// turn.
#[derive(Debug, Default)]
pub struct SystemClock {
    /// Today's string, and the span of wall-clock time it holds for.
    day: std::sync::Mutex<Option<Day>>,
}

#[derive(Debug)]
struct Day {
    text: String,
    starts: std::time::SystemTime,
    ends: std::time::SystemTime,
}

impl Clock for SystemClock {
    fn today(&self) -> String {
        let now = std::time::SystemTime::now();
        let mut day = self.day.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        // The clock may also have been set back: then the day is worked out again.
        if let Some(day) = day.as_ref().filter(|day| day.starts <= now && now < day.ends) {
            return day.text.clone();
        }
        let zoned = jiff::Zoned::now();
        let text = date_string(&zoned);
        if let Some((starts, ends)) = day_span(&zoned) {
            *day = Some(Day { text: text.clone(), starts, ends });
        }
        text
    }
}

/// The wall-clock span of `zoned`'s local day, from its first instant to the next day's.
fn day_span(zoned: &jiff::Zoned) -> Option<(std::time::SystemTime, std::time::SystemTime)> {
    let starts = zoned.start_of_day().ok()?;
    let ends = zoned.tomorrow().ok()?.start_of_day().ok()?;
    Some((starts.timestamp().into(), ends.timestamp().into()))
}

fn date_string(zoned: &jiff::Zoned) -> String {
    zoned.strftime("%a %b %d %Y").to_string()
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
    date_string(&jiff::Zoned::now())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cached_day_is_the_clock_s_day_and_spans_now() {
        let clock = SystemClock::default();
        let (first, second) = (clock.today(), clock.today());
        // Both calls fall on the same day unless midnight passed in between.
        assert!(first == second || second == local_date_string(), "{first} / {second}");
        let day = clock.day.lock().expect("lock");
        let day = day.as_ref().expect("a cached day");
        let now = std::time::SystemTime::now();
        assert!(day.starts <= now && (now < day.ends || day.text != local_date_string()));
        assert!(day.ends.duration_since(day.starts).is_ok_and(|span| span.as_secs() >= 22 * 3600));
    }
}
