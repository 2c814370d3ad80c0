//! Writing to stdout and stderr: all at once, and quietly done when the reader went away;
//! an error as the user sees it (`CliError::report`, on stderr and as JSON); the colour rule
//! (`--color`, else `NO_COLOR`, `CLICOLOR_FORCE`, `CLICOLOR` and whether the stream is a
//! terminal, as `anstream` reads them); and the two passes every printed byte goes through
//! here, so that no command can forget them:
//!
//! - secrets: [`ctxgraph_db::secrets::redactor`] (the one table, URL credentials and
//!   secret-named environment values). Only [`write_verbatim`], the exact text an agent
//!   sends, skips it.
//! - control characters: a file name or URL from a repository must not drive the reader's
//!   terminal or CI log. Every C0 control but tab and newline (and a carriage return
//!   before a newline), DEL and the C1 controls are written as Rust escapes, `\u{1b}`
//!   (docs/cli.md). ctxgraph's own styles (SGR sequences) stay when colour is on.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::Write;
use std::process::ExitCode;

use crate::error::{CliError, render, to_json};

impl CliError {
    /// Prints the error on stderr (and, when the command was asked for JSON, as JSON on
    /// stdout too) and returns its exit code.
    pub fn report(&self, json_output: bool) -> ExitCode {
        eprintln_styled(&render(self));
        if json_output && let Ok(json) = crate::render::json(&to_json(self)) {
            let _ = write_stdout(json.as_bytes());
        }
        ExitCode::from(self.exit_code())
    }
}

/// Text for a terminal or log: secrets redacted, control characters escaped.
pub fn write_stdout(bytes: &[u8]) -> Result<(), CliError> {
    let text = String::from_utf8_lossy(bytes);
    let redacted = ctxgraph_db::secrets::redactor().text(&text);
    write_raw(escape_controls(&redacted, stdout_colored()).as_bytes())
}

/// The prompt text an agent sends (`build`, a profile's layout, the read tool's reminder),
/// or what the user asked to see in clear (`config --show-secrets`): not redacted, since
/// showing exactly that is what these commands promise; control characters still escaped
/// (`--format json` keeps every byte).
pub fn write_verbatim(bytes: &[u8]) -> Result<(), CliError> {
    write_raw(escape_controls(&String::from_utf8_lossy(bytes), false).as_bytes())
}

fn write_raw(bytes: &[u8]) -> Result<(), CliError> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        result => result.map_err(CliError::Output),
    }
}

/// `value` as pretty JSON on stdout, every string redacted but those under `prompt_keys`:
/// the prompt text an agent sends, as [`write_verbatim`] shows it. (JSON escapes control
/// characters itself.)
pub fn write_json(value: &impl serde::Serialize, prompt_keys: &[&str]) -> Result<(), CliError> {
    let mut value = serde_json::to_value(value).map_err(|e| CliError::Output(e.into()))?;
    ctxgraph_db::secrets::redactor().json_except(&mut value, prompt_keys);
    let mut json = serde_json::to_string_pretty(&value).map_err(|e| CliError::Output(e.into()))?;
    json.push('\n');
    write_raw(json.as_bytes())
}

/// Whether text written to stdout should carry ANSI styles.
pub fn stdout_colored() -> bool {
    anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never
}

/// Writes a (possibly styled) message and a newline to stderr, dropping the styles when
/// colour is off for stderr; secrets redacted and control characters escaped as on stdout.
pub fn eprintln_styled(message: &str) {
    let redacted = ctxgraph_db::secrets::redactor().text(message);
    let _ = writeln!(anstream::stderr().lock(), "{}", escape_controls(&redacted, true));
}

/// `text` with its control characters written as `\u{…}`. With `keep_styles`, SGR
/// sequences (`ESC [ digits ; … m`, colours and bold only: no cursor movement, no title,
/// no hyperlink) are kept for the stream to show or strip. Hand-written: the escaping
/// crates quote for a shell or for Rust source, not for a terminal that must show text.
pub fn escape_controls(text: &str, keep_styles: bool) -> Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let len = if keep_styles && c == '\x1b' { sgr_len(rest) } else { 0 };
        if len > 0 {
            out.push_str(&rest[..len]);
            rest = &rest[len..];
            continue;
        }
        if unsafe_char(c) && !(c == '\r' && rest[1..].starts_with('\n')) {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    Cow::Owned(out)
}

/// The length of the SGR sequence `text` starts with, or 0.
fn sgr_len(text: &str) -> usize {
    let Some(params) = text.strip_prefix("\x1b[") else { return 0 };
    let digits = params.bytes().take_while(|b| b.is_ascii_digit() || *b == b';').count();
    if params[digits..].starts_with('m') { 2 + digits + 1 } else { 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_and_styles_kept_only_when_asked() {
        let name = "evil\x1b[31mname\x07\x1b]0;title\x07.md\r\nnext\rover\u{9b}2J\tok\n";
        assert_eq!(
            escape_controls(name, false),
            "evil\\u{1b}[31mname\\u{7}\\u{1b}]0;title\\u{7}.md\r\nnext\\u{d}over\\u{9b}2J\tok\n"
        );
        assert_eq!(
            escape_controls(name, true),
            "evil\x1b[31mname\\u{7}\\u{1b}]0;title\\u{7}.md\r\nnext\\u{d}over\\u{9b}2J\tok\n"
        );
        assert!(matches!(escape_controls("plain\ttext\n", false), Cow::Borrowed(_)));
    }
}
