//! Writing to stdout: all at once, and quietly done when the reader went away. And the one
//! colour rule: `--color`, else `NO_COLOR`, `CLICOLOR_FORCE`, `CLICOLOR` and whether the
//! stream is a terminal, as `anstream` reads them.

use std::io::Write;

use crate::error::CliError;

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
