//! Writing to stdout: all at once, and quietly done when the reader went away.

use std::io::Write;

use crate::error::CliError;

pub fn write_stdout(bytes: &[u8]) -> Result<(), CliError> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        result => result.map_err(CliError::Output),
    }
}
