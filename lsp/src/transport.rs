//! The base protocol over stdin and stdout, with a maximum message size.
//!
//! `lsp-server`'s own stdio transport cannot be used: its reader allocates the body from
//! the `Content-Length` header before reading a byte (`Content-Length: 1000000000000000`
//! aborts the process on the failed allocation, `3000000000` zero-fills gigabytes), reads
//! header lines of any length, and its writer turns an editor that stopped reading (a
//! broken pipe) into a failure. This reader refuses a message over [`MAX_MESSAGE_BYTES`]
//! before reading its body, bounds every header line, and reads a body as it arrives; the
//! messages themselves are still `lsp-server`'s ([`Message`]), and so is the connection.

use std::io::{self, BufRead, Read, Write};
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender, bounded};
use lsp_server::{Connection, Message};

/// The largest message the server reads: a whole document is sent in one `didOpen` or
/// `didChange`, and no rule file an agent sends comes near this (docs/editors.md).
pub const MAX_MESSAGE_BYTES: u64 = 64 * 1024 * 1024;
/// The longest header line (`Content-Length: …\r\n`, `Content-Type: …\r\n`).
const MAX_HEADER_LINE: u64 = 1024;
/// Header lines before the blank line (the protocol defines two).
const MAX_HEADERS: usize = 16;

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

/// `n` bytes in MiB, for the limit's message.
fn mib(n: u64) -> u64 {
    n / (1024 * 1024)
}

/// One line of at most [`MAX_HEADER_LINE`] bytes, without its `\r\n`; `None` at the end of
/// the input before any byte of it.
fn header_line(input: &mut impl BufRead) -> io::Result<Option<String>> {
    let mut line = Vec::new();
    let read = input.by_ref().take(MAX_HEADER_LINE).read_until(b'\n', &mut line)?;
    if read == 0 {
        return Ok(None);
    }
    let Some(line) = line.strip_suffix(b"\r\n") else {
        let shown = String::from_utf8_lossy(&line[..line.len().min(40)]).into_owned();
        return Err(invalid(if read as u64 >= MAX_HEADER_LINE {
            format!("a header line longer than {MAX_HEADER_LINE} bytes ({shown:?}…)")
        } else {
            format!("malformed header {shown:?}: a header line ends with \\r\\n")
        }));
    };
    String::from_utf8(line.to_vec()).map(Some).map_err(|_| invalid("a header that is not UTF-8".to_owned()))
}

/// Reads one message; `None` at the end of the input between messages. A framing error
/// (a malformed or missing header, a size over the limit, a body cut short, a body that is
/// not a JSON-RPC message) is `InvalidData` or `UnexpectedEof`, its text safe to print: it
/// never quotes the body.
pub fn read_message(input: &mut impl BufRead) -> io::Result<Option<Message>> {
    let mut length: Option<u64> = None;
    let mut headers = 0;
    loop {
        let Some(line) = header_line(input)? else {
            return if headers == 0 {
                Ok(None)
            } else {
                Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the input ends inside a message's headers"))
            };
        };
        if line.is_empty() {
            break;
        }
        headers += 1;
        if headers > MAX_HEADERS {
            return Err(invalid(format!("more than {MAX_HEADERS} header lines")));
        }
        let Some((name, value)) = line.split_once(':') else {
            return Err(invalid(format!("malformed header {:?}: no `name: value`", cut(&line))));
        };
        if name.trim().eq_ignore_ascii_case("Content-Length") {
            let value = value.trim();
            let bytes = value
                .parse::<u64>()
                .map_err(|_| invalid(format!("Content-Length {:?} is not a number of bytes", cut(value))))?;
            if bytes > MAX_MESSAGE_BYTES {
                return Err(invalid(format!(
                    "a message of {bytes} bytes is over the limit of {} MiB ({MAX_MESSAGE_BYTES} bytes)",
                    mib(MAX_MESSAGE_BYTES)
                )));
            }
            length = Some(bytes);
        }
    }
    let length = length.ok_or_else(|| invalid("a message with no Content-Length header".to_owned()))?;
    // Read as it arrives, never allocated from the header: a client that announces 60 MiB
    // and sends 10 bytes costs 10 bytes.
    let mut body = Vec::new();
    input.by_ref().take(length).read_to_end(&mut body)?;
    if (body.len() as u64) < length {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("the input ends after {} of the message's {length} bytes", body.len()),
        ));
    }
    serde_json::from_slice::<Message>(&body)
        .map(Some)
        .map_err(|err| invalid(format!("a body that is not a JSON-RPC message ({err})")))
}

/// At most 40 characters of a header, for an error.
fn cut(text: &str) -> String {
    text.chars().take(40).collect()
}

fn write_message(output: &mut impl Write, message: &Message) -> io::Result<()> {
    // `Message::write` adds the `jsonrpc` member and the header, as the protocol asks.
    message.write(output)
}

/// The reader and writer threads of [`stdio`].
pub struct IoThreads {
    reader: JoinHandle<io::Result<()>>,
    writer: JoinHandle<io::Result<()>>,
}

impl IoThreads {
    /// How the reader stopped: `Ok` at the end of stdin or after `exit`, the framing error
    /// otherwise. Call it once the connection's receiver is disconnected (the reader has
    /// stopped then) or after an `exit` (the reader stops after reading one).
    pub fn reader_result(self) -> (io::Result<()>, JoinHandle<io::Result<()>>) {
        let result =
            self.reader.join().unwrap_or_else(|_| Err(io::Error::other("the reader thread panicked")));
        (result, self.writer)
    }

    /// The writer alone (the reader left running: it may be waiting on stdin).
    pub fn writer(self) -> JoinHandle<io::Result<()>> {
        self.writer
    }
}

/// A connection over stdin and stdout: a reader thread that frames what the editor sends
/// (see [`read_message`]) and stops after `exit`, a writer thread for the replies.
pub fn stdio() -> io::Result<(Connection, IoThreads)> {
    let (to_main, receiver) = bounded::<Message>(0);
    let (sender, from_main): (Sender<Message>, Receiver<Message>) = bounded(0);
    let reader = std::thread::Builder::new().name("ctxgraph-lsp-reader".to_owned()).spawn(move || {
        let mut stdin = io::stdin().lock();
        while let Some(message) = read_message(&mut stdin)? {
            let exit = matches!(&message, Message::Notification(n) if n.method == "exit");
            if to_main.send(message).is_err() || exit {
                break;
            }
        }
        Ok(())
    })?;
    let writer = std::thread::Builder::new().name("ctxgraph-lsp-writer".to_owned()).spawn(move || {
        let mut stdout = io::stdout().lock();
        // Ends when the main loop drops its sender, or when stdout fails (a broken pipe:
        // the editor stopped reading); the main loop sees the send fail then.
        from_main.into_iter().try_for_each(|message| write_message(&mut stdout, &message))
    })?;
    Ok((Connection { sender, receiver }, IoThreads { reader, writer }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(bytes: &[u8]) -> io::Result<Option<Message>> {
        read_message(&mut io::BufReader::new(bytes))
    }

    fn error(bytes: &[u8]) -> String {
        match read(bytes) {
            Err(err) => err.to_string(),
            Ok(message) => panic!("read {message:?}"),
        }
    }

    #[test]
    fn a_message_is_read_and_the_end_between_messages_is_none() {
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#;
        let framed = format!("Content-Length: {}\r\nContent-Type: x\r\n\r\n{body}", body.len());
        assert!(matches!(read(framed.as_bytes()), Ok(Some(Message::Request(r))) if r.method == "shutdown"));
        assert!(matches!(read(b""), Ok(None)));
    }

    #[test]
    fn sizes_over_the_limit_and_broken_framing_are_refused_with_what_is_wrong() {
        for length in ["1000000000000000", "3000000000", "67108865"] {
            let message = error(format!("Content-Length: {length}\r\n\r\n{{").as_bytes());
            assert_eq!(
                message,
                format!("a message of {length} bytes is over the limit of 64 MiB (67108864 bytes)")
            );
        }
        assert!(error(b"Content-Length: 99999999999999999999999\r\n\r\n").contains("is not a number"));
        assert!(error(b"Content-Length: 10\r\n\r\n{}").contains("ends after 2 of the message's 10 bytes"));
        assert!(error(b"garbage\r\n\r\n").contains("malformed header"));
        assert!(error(b"Content-Length: 2\n\n{}").contains("malformed header"));
        assert!(error(&[b'x'; 5000]).contains("longer than 1024 bytes"));
        assert!(error(b"Content-Type: x\r\n\r\n").contains("no Content-Length"));
        assert!(error(b"Content-Length: 2\r\n\r\n{}").contains("not a JSON-RPC message"));
        let secret = b"Content-Length: 9\r\n\r\nAKIAQQQQQ";
        assert!(!error(secret).contains("AKIA"), "the body is never quoted");
        let many = "X-A: 1\r\n".repeat(20);
        assert!(error(many.as_bytes()).contains("more than 16 header lines"));
    }
}
