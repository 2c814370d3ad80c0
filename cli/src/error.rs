//! Errors as the user sees them, and the exit codes they map to.

use ctxgraph_check::{ScenariosError, SnapshotFailure};
use ctxgraph_db::lines::Column;
use ctxgraph_db::secrets;
use ctxgraph_engine::EngineError;
use ctxgraph_memory::redact::Redactor;

use crate::diagnostic::{Diagnostic, column_offset, error_line, redact_line, window};

/// Exit codes: 0 success, 1 a check or lint failed, 2 bad input, 3 a bug in ctxgraph.
pub const EXIT_FINDINGS: u8 = 1;
pub const EXIT_INPUT: u8 = 2;
pub const EXIT_INTERNAL: u8 = 3;

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("cannot write output: {0}")]
    Output(std::io::Error),
    #[error("no config value at {0}")]
    NoSuchKey(String),
    #[error(transparent)]
    Check(#[from] SnapshotFailure),
    #[error(transparent)]
    Watch(ctxgraph_engine::watch::WatchError),
    #[error(transparent)]
    Memory(#[from] ctxgraph_memory::StoreError),
    #[error("{0}")]
    Usage(String),
    #[error("{}: {source}", path.display())]
    ReadInput { path: std::path::PathBuf, source: std::io::Error },
    /// The language server stopped on a malformed message or a failure.
    #[error("lsp: {0}")]
    Lsp(ctxgraph_lsp::LspError),
    /// A combination of options the command does not support.
    #[error("{0} is not supported")]
    Unsupported(&'static str),
}

impl From<ScenariosError> for CliError {
    fn from(err: ScenariosError) -> Self {
        CliError::Check(SnapshotFailure::Scenarios(err))
    }
}

impl CliError {
    /// The exit code the process ends with for this error ([`EXIT_INPUT`] for bad input,
    /// [`EXIT_INTERNAL`] for a failure of the machine or of ctxgraph).
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Engine(_) | CliError::NoSuchKey(_) | CliError::Usage(_) => EXIT_INPUT,
            CliError::Output(_) | CliError::Watch(_) => EXIT_INTERNAL,
            CliError::Lsp(ctxgraph_lsp::LspError::BadMessage(_)) => EXIT_INPUT,
            CliError::Lsp(ctxgraph_lsp::LspError::Failed(_)) => EXIT_INTERNAL,
            CliError::Memory(err) if err.is_bad_input() => EXIT_INPUT,
            CliError::Memory(_) => EXIT_INTERNAL,
            CliError::ReadInput { .. } | CliError::Unsupported(_) => EXIT_INPUT,
            CliError::Check(
                SnapshotFailure::Scenarios(_)
                | SnapshotFailure::Build { .. }
                | SnapshotFailure::OutsideRepository { .. },
            ) => EXIT_INPUT,
            CliError::Check(SnapshotFailure::Write { .. }) => EXIT_INTERNAL,
        }
    }
}

/// `error: …` with, for errors at a position, the offending line and a caret.
pub fn render(err: &CliError) -> String {
    match err {
        CliError::Engine(engine) => render_engine(engine),
        CliError::Check(SnapshotFailure::Scenarios(ScenariosError::Invalid { path, message, at })) => {
            let source = path.display().to_string();
            snippet(message, &source, (at.line, at.column, Column::Chars), &at.line_text)
        }
        CliError::Check(SnapshotFailure::Build { scenario, error }) => {
            format!("{}\n  (while building scenario {scenario})", render_engine(error))
        }
        _ => error_line(&err.to_string()),
    }
}

/// An engine error, with the offending line for a broken input at a position (any agent's
/// config, [`EngineError::fault`]).
pub fn render_engine(err: &EngineError) -> String {
    match err.fault().and_then(|fault| fault.at.map(|at| (fault.source, at))) {
        Some((Some(source), at)) if !at.line_text.is_empty() => {
            snippet(&at.headline, &source, (at.line, at.column, at.unit), &at.line_text)
        }
        _ => error_line(&err.to_string()),
    }
}

/// `at` is the 1-based line and column, and what the column counts.
fn snippet(message: &str, source: &str, at: (usize, usize, Column), line_text: &str) -> String {
    let (line, column, unit) = at;
    let at = column_offset(line_text, column, unit);
    // The caret covers the character at the column (nothing past the end of the line).
    let end = line_text[at..].chars().next().map_or(at, |c| at + c.len_utf8());
    Diagnostic { message, source, text: line_text, line, range: at..end, column }.render()
}

/// A line of source for `--format json`: the same bounded window the text shows.
fn line_window(line_text: &str, column: usize, unit: Column) -> String {
    let at = column_offset(line_text, column, unit);
    let (line, range) = redact_line(line_text, at..at);
    window(&line, range).0
}

/// The error as data, for `--format json`: a stable code, the message, and for a broken
/// input where it is.
pub fn to_json(err: &CliError) -> serde_json::Value {
    let Some(fault) = (match err {
        CliError::Engine(engine) => engine.fault(),
        _ => None,
    }) else {
        return serde_json::json!({"error": {"code": "error", "message": secrets::redact(&err.to_string()).0}});
    };
    let mut error = serde_json::json!({
        "code": fault.code,
        "message": secrets::redact(&err.to_string()).0,
        "source": fault.source,
    });
    if let Some(at) = &fault.at {
        error["line"] = at.line.into();
        error["column"] = at.column.into();
        if !at.line_text.is_empty() {
            error["line_text"] = line_window(&at.line_text, at.column, at.unit).into();
        }
        error["rule"] = at.rule.into();
    }
    for (name, value) in &fault.details {
        error[*name] = value.as_str().into();
    }
    if !fault.issues.is_empty() {
        // A schema issue quotes the value it refused.
        let mut issues = serde_json::Value::Array(
            fault
                .issues
                .iter()
                .map(|issue| serde_json::json!({"message": issue.message, "path": issue.path}))
                .collect(),
        );
        Redactor::default().redact_json(&mut issues);
        error["issues"] = issues;
    }
    serde_json::json!({ "error": error })
}
