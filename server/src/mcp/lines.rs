//! `ctxgraph mcp`'s stdio: the line framing in front of `rmcp`.
//!
//! `rmcp`'s own stdio transport drops a line over its 16 MiB cap and a line that is not
//! JSON without a word (on purpose: its authors fear reply storms with echoing peers), so a
//! client that sent one waits forever; and it reads a known method with malformed params
//! as an unknown method. JSON-RPC 2.0 asks for an answer to each of them. So `ctxgraph mcp`
//! reads its lines here with `ctxgraph serve`'s framing (`crate::rpc`: the same
//! cap, the same parse and envelope checks, the same replies), answers what it refuses
//! itself, and hands `rmcp` only messages it can read, through a [`Transport`] of channels.
//!
//! Three threads: this module's reader (blocking reads of stdin, so a pending read never
//! holds up the protocol's runtime), `rmcp`'s runtime, and a writer that owns stdout, so
//! each reply goes out as one whole line whichever side made it.

use std::io::{self, BufRead, Write};
use std::thread::JoinHandle;

use crate::rpc::{Incoming, code, error_line, next_line, parse_line, request_error};
use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequest, CallToolRequestMethod, ClientJsonRpcMessage, ConstString, InitializeRequest,
    InitializeResultMethod, ListToolsRequest, ListToolsRequestMethod, PingRequest, PingRequestMethod,
    ServerJsonRpcMessage,
};
use rmcp::transport::Transport;
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::mpsc;

/// Lines waiting on either side; the reader blocks once its side is full, so a client that
/// does not read its replies cannot make the server buffer without bound.
const QUEUE: usize = 64;

/// What the reader passes on for one line.
enum Inbound {
    /// A message for `rmcp`.
    Message(Box<ClientJsonRpcMessage>),
    /// The reply refusing the line, to be written as it is.
    Refused(String),
}

/// `rmcp`'s transport: messages from the reader in, reply lines to the writer out.
pub struct Lines {
    inbound: mpsc::Receiver<Inbound>,
    replies: mpsc::Sender<String>,
}

/// The running reader and writer threads behind [`Lines`].
pub struct Threads {
    writer: JoinHandle<()>,
}

impl Threads {
    /// Waits until every reply is written. Call it once the transport is dropped (the
    /// service ended); the reader is left alone, as it may be blocked on a read that only
    /// ends with the process.
    pub fn finish(self) {
        let _ = self.writer.join();
    }
}

/// Starts the reader over `input` and the writer over `output`.
pub fn start(
    input: impl BufRead + Send + 'static,
    output: impl Write + Send + 'static,
) -> io::Result<(Lines, Threads)> {
    let (inbound_tx, inbound) = mpsc::channel(QUEUE);
    let (replies, replies_rx) = mpsc::channel(QUEUE);
    std::thread::Builder::new()
        .name("ctxgraph-mcp-reader".to_owned())
        .spawn(move || read(input, &inbound_tx))?;
    let writer = std::thread::Builder::new()
        .name("ctxgraph-mcp-writer".to_owned())
        .spawn(move || write(output, replies_rx))?;
    Ok((Lines { inbound, replies }, Threads { writer }))
}

/// Reads lines until the input ends (or the service is gone), passing each one on.
fn read(mut input: impl BufRead, inbound: &mpsc::Sender<Inbound>) {
    let mut buf = Vec::new();
    loop {
        let next = match next_line(&mut input, &mut buf) {
            Ok(Incoming::End) | Err(_) => return,
            Ok(Incoming::Blank) => continue,
            Ok(Incoming::Refused(reply)) => Inbound::Refused(reply),
            Ok(Incoming::Text(text)) => match inbound_of(text) {
                Some(next) => next,
                None => continue,
            },
        };
        if inbound.blocking_send(next).is_err() {
            return;
        }
    }
}

/// Writes each reply as one line, until every sender is gone or the output fails.
fn write(mut output: impl Write, mut replies: mpsc::Receiver<String>) {
    while let Some(line) = replies.blocking_recv() {
        let written = output.write_all(line.as_bytes()).and_then(|()| output.write_all(b"\n"));
        if written.and_then(|()| output.flush()).is_err() {
            return;
        }
    }
}

/// One line of text: a message for `rmcp`, a reply refusing it, or nothing to do (a
/// notification or a response `rmcp` cannot read: JSON-RPC answers neither).
fn inbound_of(text: &str) -> Option<Inbound> {
    let value = match parse_line(text) {
        Ok(value) => value,
        Err(reply) => return Some(Inbound::Refused(reply)),
    };
    if value.is_array() {
        // MCP dropped JSON-RPC batches (2025-06-18), and `rmcp` reads none.
        let message = "invalid request: MCP takes one request per line, not a batch";
        return Some(Inbound::Refused(error_line(Value::Null, code::INVALID_REQUEST, message)));
    }
    let is_response =
        value.get("method").is_none() && (value.get("result").is_some() || value.get("error").is_some());
    if !is_response && let Some(reply) = request_error(&value).or_else(|| params_error(&value)) {
        return Some(Inbound::Refused(reply));
    }
    match ClientJsonRpcMessage::deserialize(&value) {
        Ok(message) => Some(Inbound::Message(Box::new(message))),
        Err(err) => {
            let id = value.get("id").filter(|_| !is_response)?.clone();
            let message = format!("invalid request: {err}");
            Some(Inbound::Refused(error_line(id, code::INVALID_REQUEST, message)))
        }
    }
}

/// The reply for a request to a method this server serves whose params do not fit it.
/// (`rmcp` would read it as a request for an unknown method and answer "method not found".)
fn params_error(request: &Value) -> Option<String> {
    let method = request.get("method").and_then(Value::as_str)?;
    let fits = match method {
        InitializeResultMethod::VALUE => InitializeRequest::deserialize(request).map(drop),
        PingRequestMethod::VALUE => PingRequest::deserialize(request).map(drop),
        ListToolsRequestMethod::VALUE => ListToolsRequest::deserialize(request).map(drop),
        CallToolRequestMethod::VALUE => CallToolRequest::deserialize(request).map(drop),
        _ => return None,
    };
    let err = fits.err()?;
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    Some(error_line(id, code::INVALID_PARAMS, format!("invalid params for {method}: {err}")))
}

impl Transport<RoleServer> for Lines {
    type Error = io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let replies = self.replies.clone();
        async move {
            let line = serde_json::to_string(&item).map_err(io::Error::other)?;
            replies.send(line).await.map_err(|_| io::Error::from(io::ErrorKind::BrokenPipe))
        }
    }

    /// `rmcp` polls this in a `select!` and may drop it at any await: both awaits are
    /// cancel-safe, and a refusal is handed to the writer only with a slot already reserved,
    /// so no line is lost either way.
    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            let slot = self.replies.reserve().await.ok()?;
            match self.inbound.recv().await? {
                Inbound::Message(message) => return Some(*message),
                Inbound::Refused(reply) => slot.send(reply),
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &str) -> Value {
        match inbound_of(text) {
            Some(Inbound::Refused(reply)) => serde_json::from_str(&reply).unwrap(),
            Some(Inbound::Message(message)) => panic!("passed on: {message:?}"),
            None => panic!("no reply"),
        }
    }

    #[test]
    fn known_methods_with_params_that_do_not_fit_are_invalid_params() {
        let reply = refused(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":[1]}"#);
        assert_eq!(reply["id"], 7);
        assert_eq!(reply["error"]["code"], code::INVALID_PARAMS);
        // `null` is no structured value: an invalid request, as `serve` answers it.
        let reply = refused(r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":null}"#);
        assert_eq!(reply["id"], "a");
        assert_eq!(reply["error"]["code"], code::INVALID_REQUEST);
    }

    #[test]
    fn good_messages_and_responses_pass() {
        let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}"#;
        assert!(matches!(inbound_of(call), Some(Inbound::Message(_))));
        let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert!(matches!(inbound_of(note), Some(Inbound::Message(_))));
        let answer = r#"{"jsonrpc":"2.0","id":3,"result":{}}"#;
        assert!(matches!(inbound_of(answer), Some(Inbound::Message(_))));
    }
}
