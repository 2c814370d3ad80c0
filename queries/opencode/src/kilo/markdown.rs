//! KI7, KI9: how Kilo reads one rule file. opencode reads a rule file as plain text (I7);
//! Kilo reads a project file only when its real path is inside the project (the git root),
//! and then substitutes `{env:NAME}` and `{file:PATH}` in it as it does in its config files.
//! Whatever goes wrong makes the whole file read as empty, which Kilo then leaves out.

use std::path::{Path, PathBuf};

use ctxgraph_db::db::{Db, Workspace, env_var};
use ctxgraph_db::files::{file_text, real_path};
use ctxgraph_db::js::js_trim;
use ctxgraph_db::path;

/// Who wrote a rule file, which decides what Kilo lets it do.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Trust {
    /// A global file (`~/.config/kilo/AGENTS.md`, `~/.claude/CLAUDE.md`, the home rule
    /// folders): read as it is, variables substituted, `{file:…}` anywhere.
    Trusted,
    /// A project file: its real path and every `{file:…}` it names must be inside `root`,
    /// and it may not name an environment variable.
    Project {
        /// The project's scope: the git root (the working directory outside git).
        root: PathBuf,
    },
}

/// One rule file as Kilo reads it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Read {
    /// The text Kilo puts after `Instructions from: <path>\n` (empty: no block).
    pub text: String,
    /// Why it reads as empty when it has text on disk (the read or a substitution failed).
    pub refused: Option<Refused>,
    /// The files a `{file:…}` inlined, in order.
    pub inlines: Vec<PathBuf>,
}

/// Why Kilo reads a rule file as empty, as data: one word, the rule, and a sentence citing it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Refused {
    /// `outside_project`, `unreadable` (KI7) or `refused` (a substitution failed, KI9).
    pub fate: &'static str,
    /// `KI7` or `KI9`.
    pub rule: &'static str,
    /// Why, in words.
    pub why: String,
}

impl Read {
    fn refused(fate: &'static str, rule: &'static str, why: String) -> Self {
        Read { text: String::new(), refused: Some(Refused { fate, rule, why }), inlines: Vec::new() }
    }
}

/// Variables Kilo never substitutes (its server's and browser broker's secrets).
const BLOCKED_VARS: &[&str] =
    &["KILO_SERVER_PASSWORD", "KILO_SERVER_USERNAME", "KILO_BROWSER_BROKER_URL", "KILO_BROWSER_BROKER_TOKEN"];

/// Whether `inner` (a real path) is `root` or below it.
fn inside(root: &Path, inner: &Path) -> bool {
    inner.starts_with(root)
}

/// Reads `file` (absolute) the way Kilo reads an instruction file for `trust` (KI7, KI9).
pub fn read_rule(db: &dyn Db, ws: Workspace, file: &Path, trust: &Trust) -> Read {
    if let Trust::Project { root } = trust {
        let real = real_path(db, file);
        if !inside(&real_path(db, root), &real) {
            return Read::refused(
                "outside_project",
                "KI7",
                format!(
                    "its real path {} is outside the project {} (KI7)",
                    path::display(&real),
                    path::display(root)
                ),
            );
        }
        if is_process_environ(&real) {
            return Read::refused("unreadable", "KI7", "it is a process's environment file (KI7)".to_owned());
        }
    }
    let text = match file_text(db, db.files().get(db, file)) {
        Ok(decoded) => decoded.text.to_string(),
        Err(failure) => {
            return Read::refused("unreadable", "KI7", format!("reading it failed: {failure} (KI7)"));
        }
    };
    match substitute(db, ws, file, &text, trust) {
        Ok((text, inlines)) => Read { text, refused: None, inlines },
        Err(why) => Read::refused("refused", "KI9", why),
    }
}

fn is_process_environ(real: &Path) -> bool {
    let text = path::display(real);
    text.strip_prefix("/proc/").is_some_and(|rest| rest.ends_with("/environ"))
}

/// A `{kind:…}` reference in a text: its byte range and what is between `:` and `}`.
struct Reference<'a> {
    start: usize,
    end: usize,
    value: &'a str,
}

/// Every `{kind:VALUE}` in `text` (VALUE: one or more characters other than `}`), left to
/// right, not overlapping; with `skip_after_dollar`, one right after a `$` is not one (the
/// markdown form of Kilo's pattern, for project files).
fn references<'a>(text: &'a str, kind: &str, skip_after_dollar: bool) -> Vec<Reference<'a>> {
    let open = format!("{{{kind}:");
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find(&open).map(|i| from + i) {
        let value_start = at + open.len();
        let close = text[value_start..].find('}').map(|i| value_start + i);
        match close {
            Some(close) if close > value_start => {
                if skip_after_dollar && text[..at].ends_with('$') {
                    from = at + 1;
                    continue;
                }
                found.push(Reference { start: at, end: close + 1, value: &text[value_start..close] });
                from = close + 1;
            }
            _ => from = at + 1,
        }
    }
    found
}

/// Whether the line holding `at` starts (after blanks) with `//`: Kilo leaves references on
/// such lines alone.
fn on_comment_line(text: &str, at: usize) -> bool {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    text[line_start..at].trim_start().starts_with("//")
}

/// KI9: `{env:NAME}` then `{file:PATH}`, as Kilo's markdown substitution does them.
fn substitute(
    db: &dyn Db,
    ws: Workspace,
    file: &Path,
    text: &str,
    trust: &Trust,
) -> Result<(String, Vec<PathBuf>), String> {
    let markdown = matches!(trust, Trust::Project { .. });
    if markdown
        && let Some(env) = references(text, "env", true).into_iter().find(|r| !on_comment_line(text, r.start))
    {
        return Err(format!(
            "a project file may not name an environment variable, and this one names {} (KI9)",
            &text[env.start..env.end]
        ));
    }
    let host = ws.host(db);
    let mut replaced = String::with_capacity(text.len());
    let mut last = 0;
    for env in references(text, "env", markdown) {
        replaced.push_str(&text[last..env.start]);
        if on_comment_line(text, env.start) {
            replaced.push_str(&text[env.start..env.end]);
        } else if BLOCKED_VARS.contains(&env.value.to_uppercase().as_str()) {
            return Err(format!(
                "it names {}, which Kilo never substitutes (KI9)",
                &text[env.start..env.end]
            ));
        } else {
            replaced.push_str(&env_var(db, host, env.value.to_owned()).unwrap_or_default());
        }
        last = env.end;
    }
    replaced.push_str(&text[last..]);

    let dir = file.parent().unwrap_or(file);
    let home = host.home(db);
    let mut out = String::with_capacity(replaced.len());
    let mut inlines = Vec::new();
    let mut last = 0;
    for reference in references(&replaced, "file", markdown) {
        out.push_str(&replaced[last..reference.start]);
        last = reference.end;
        if on_comment_line(&replaced, reference.start) {
            out.push_str(&replaced[reference.start..reference.end]);
            continue;
        }
        let named = match reference.value.strip_prefix("~/") {
            Some(rest) => home.join(rest),
            None => PathBuf::from(reference.value),
        };
        let target = path::resolve(dir, named);
        if let Trust::Project { root } = trust {
            let real = real_path(db, &target);
            let exists = db.files().get(db, &target).kind(db).exists();
            if exists && (!inside(&real_path(db, root), &real) || is_process_environ(&real)) {
                return Err(format!(
                    "{} names {}, outside the project {} (KI9)",
                    &replaced[reference.start..reference.end],
                    path::display(&real),
                    path::display(root)
                ));
            }
        }
        // A missing or unreadable file inlines as nothing.
        if let Ok(decoded) = file_text(db, db.files().get(db, &target)) {
            out.push_str(js_trim(&decoded.text));
            inlines.push(target);
        }
    }
    out.push_str(&replaced[last..]);
    Ok((out, inlines))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reference_after_a_dollar_or_without_a_value_is_not_one() {
        let text = "a {env:A} ${env:B} {env:} {env:C";
        let plain: Vec<&str> = references(text, "env", false).iter().map(|r| r.value).collect();
        assert_eq!(plain, ["A", "B"]);
        let markdown: Vec<&str> = references(text, "env", true).iter().map(|r| r.value).collect();
        assert_eq!(markdown, ["A"]);
    }

    #[test]
    fn a_comment_line_is_one_whose_text_before_the_reference_starts_with_slashes() {
        let text = "x\n  // {env:A}\nb // {env:B}";
        let at = |needle: &str| text.find(needle).expect("in text");
        assert!(on_comment_line(text, at("{env:A}")));
        assert!(!on_comment_line(text, at("{env:B}")));
    }
}
