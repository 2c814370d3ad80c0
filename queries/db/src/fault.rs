//! A mistake in one of an agent's inputs (its config, a settings file) as plain data, so
//! that every surface shows it alike whichever agent reads the input: the CLI's snippet of
//! the offending line with a caret, `--format json`'s fields, a server's message. Each
//! agent's folder turns its own error into an [`InputFault`]; nothing here knows an agent.

use crate::lines::Column;

/// A mistake in an input the agent reads, which stops it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct InputFault {
    /// A stable code for scripts (`invalid-jsonc`, `invalid-toml`, …).
    pub code: &'static str,
    /// The whole message, naming the place.
    pub message: String,
    /// The input: a path, or a name where it has none (an environment variable); none for
    /// a fault of the whole environment (a flag's value).
    pub source: Option<String>,
    /// Where in the input, when it has positions.
    pub at: Option<Box<FaultAt>>,
    /// Facts beyond the message a script may branch on, by name (opencode's JSONC error
    /// code as `jsonc_code`).
    pub details: Vec<(&'static str, String)>,
    /// Each value a schema refused, when the input parsed but did not fit.
    pub issues: Vec<FaultIssue>,
}

/// Where a fault is, with the line's text for a snippet.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FaultAt {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, counted as `unit` says.
    pub column: usize,
    /// What `column` counts.
    pub unit: Column,
    /// The line as written (never a value substituted into it), without its line break;
    /// empty when the reader kept only the position.
    pub line_text: String,
    /// The message a snippet opens with (the place follows it on its own line).
    pub headline: String,
    /// The id of the rule the mistake breaks, as `docs/` names it.
    pub rule: &'static str,
}

/// One value a schema refused.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FaultIssue {
    /// What is wrong with it.
    pub message: String,
    /// Its key path (`["compaction", "tail_turns"]`); empty for the root.
    pub path: Vec<String>,
}

impl InputFault {
    /// A fault with no position and nothing beyond its message.
    pub fn new(code: &'static str, source: Option<String>, message: impl Into<String>) -> Self {
        InputFault {
            code,
            message: message.into(),
            source,
            at: None,
            details: Vec::new(),
            issues: Vec::new(),
        }
    }

    /// A fault in the file `path`, at 1-based `line`:`column` (counted as `unit` says; a line
    /// of 0 for a position the reader does not know), whose text there is `line_text`. `message`
    /// is the whole message; `what` is what is wrong, without the place, for the snippet.
    pub fn in_file(
        code: &'static str,
        path: &std::path::Path,
        (line, column, unit): (usize, usize, Column),
        line_text: &str,
        (message, what): (String, &str),
        rule: &'static str,
    ) -> Self {
        let source = path.display().to_string();
        let at = (line > 0).then(|| {
            Box::new(FaultAt {
                line,
                column,
                unit,
                line_text: line_text.to_owned(),
                headline: format!("{source}: {what}"),
                rule,
            })
        });
        InputFault { at, ..InputFault::new(code, Some(source), message) }
    }
}
