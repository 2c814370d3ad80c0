//! Writing to stdout: all at once, and quietly done when the reader went away; an error as
//! the user sees it (`CliError::report`, on stderr and as JSON). And the one colour rule:
//! `--color`, else `NO_COLOR`, `CLICOLOR_FORCE`, `CLICOLOR` and whether the stream is a
//! terminal, as `anstream` reads them.

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

pub fn write_stdout(bytes: &[u8]) -> Result<(), CliError> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        result => result.map_err(CliError::Output),
    }
}

/// Whether text written to stdout should carry ANSI styles.
pub fn stdout_colored() -> bool {
    anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never
}

/// Writes a (possibly styled) message and a newline to stderr, dropping the styles when
/// colour is off for stderr.
pub fn eprintln_styled(message: &str) {
    let _ = writeln!(anstream::stderr().lock(), "{message}");
}
