//! `ctxgraph serve --stdio`: JSON-RPC 2.0 over newline-delimited JSON, for agent hosts.
//!
//! One request per line in, one response per line out. The engine stays warm between
//! requests, so a build after a turn with no file changes executes no query at all. Before
//! every request that reads the world, the server applies what the watcher reported (or,
//! without a watcher, rescans every path the graph knows), so answers are never stale.
//!
//! The methods and their messages are in [`crate::protocol`] (and docs/protocol.md); each
//! one is an operation of [`crate::ops::Host`], the same one `ctxgraph mcp`'s tool calls.
//! A bad request gets a JSON-RPC error and the server keeps serving.
//!
//! The framing (one JSON value per line, `jsonrpc`/`id`/`method`/`params`, the standard
//! error codes) is a few lines of `serde_json` here: JSON-RPC crates bring a transport and
//! an async runtime around it, and the protocol needs neither. `ctxgraph mcp` reads its
//! lines through the same framing ([`next_line`], [`parse_line`], [`request_error`]).

use std::io::{self, BufRead, Write};
use std::path::PathBuf;
use std::time::SystemTime;

use ctxgraph_engine::watch::{COOKIE_TIMEOUT, Watcher};
use ctxgraph_engine::{ChangeEvent, Engine, RemoteRefresh, Workspace};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ops::{Built, Host, OpError};
use crate::protocol::{
    BuildParams, ConfigReply, ExplainParams, ExplainReply, ForgetParams, ForgetReply, InstallationParams,
    InstallationReply, LintParams, LintReply, NearbyParams, NearbyReply, RecallParams, RecallReply,
    RememberParams, RememberReply, Scope, SessionAppendParams, SessionAppendReply, SessionCompactParams,
    SessionCompactReply, SessionExplainParams, SessionExplainReply, SessionMessagesReply, SessionOpenParams,
    SessionOpenReply, SessionParams, SessionRulesParams, SessionRulesReply, StatsReply,
};

/// JSON-RPC 2.0 error codes.
pub mod code {
    /// The line is not JSON (or not UTF-8).
    pub const PARSE_ERROR: i64 = -32700;
    /// JSON, but not a JSON-RPC 2.0 request.
    pub const INVALID_REQUEST: i64 = -32600;
    /// No such method.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// The method's parameters are missing, unknown or of the wrong type.
    pub const INVALID_PARAMS: i64 = -32602;
    /// The request was well-formed but the context could not be built (bad config, a
    /// working directory that does not exist, …): the message says why.
    pub const BUILD_FAILED: i64 = -32000;
}

/// One client's server: the operations over a warm engine, and what keeps the engine's
/// inputs current (a watcher, or a rescan per request).
pub struct Server {
    host: Host,
    /// `None`: rescan every known path before each request instead.
    watcher: Option<Watcher>,
    /// When the earliest request whose reads are not yet watched started.
    untracked_since: Option<SystemTime>,
}

/// A JSON-RPC error, before it is given the request's id.
#[derive(Debug)]
struct RpcError {
    code: i64,
    message: String,
}

impl RpcError {
    fn new(code: i64, message: impl Into<String>) -> Self {
        Self { code, message: message.into() }
    }
}

impl From<OpError> for RpcError {
    fn from(err: OpError) -> Self {
        match err {
            OpError::Invalid(message) => RpcError::new(code::INVALID_PARAMS, message),
            OpError::Failed(message) => RpcError::new(code::BUILD_FAILED, message),
        }
    }
}

/// What handling one line produced.
pub struct Reply {
    /// The response line, without the newline; `None` for notifications.
    pub line: Option<String>,
    /// A `shutdown` was received: stop reading after writing this reply.
    pub shutdown: bool,
}

/// A JSON-RPC error object.
#[derive(Serialize)]
struct ErrorObject {
    code: i64,
    message: String,
}

/// A JSON-RPC response: `{"jsonrpc":"2.0","id":…,"result":…}` or `…,"error":{…}}`.
struct Response {
    jsonrpc: &'static str,
    /// The request's id, echoed as sent (a string, a number or null).
    id: Value,
    outcome: Outcome,
}

enum Outcome {
    Result(Answer),
    Error(ErrorObject),
}

/// By hand: `#[serde(flatten)]` on the outcome would route every reply through serde's
/// map-buffering serializer, on the path of a host's every turn.
impl Serialize for Response {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut response = serializer.serialize_struct("Response", 3)?;
        response.serialize_field("jsonrpc", self.jsonrpc)?;
        response.serialize_field("id", &self.id)?;
        match &self.outcome {
            Outcome::Result(answer) => response.serialize_field("result", answer)?,
            Outcome::Error(error) => response.serialize_field("error", error)?,
        }
        response.end()
    }
}

/// A method's answer: one typed reply of [`crate::protocol`] per method. It owns what the
/// reply shows; `build` and `nearby` lay their reply out only while serialising, so no JSON
/// tree or copy of the text is made on the way out.
enum Answer {
    /// `build`, for any agent.
    Build(Box<Built>),
    Nearby(Box<NearbyReply>),
    Installation(InstallationReply),
    Stats(StatsReply),
    Explain(Box<ExplainReply>),
    Lint(LintReply),
    Config(ConfigReply),
    SessionOpen(SessionOpenReply),
    SessionAppend(SessionAppendReply),
    SessionCompact(Box<SessionCompactReply>),
    SessionMessages(SessionMessagesReply),
    SessionExplain(Box<SessionExplainReply>),
    SessionRules(Box<SessionRulesReply>),
    Recall(RecallReply),
    Remember(RememberReply),
    Forget(ForgetReply),
    /// `null` (`shutdown`).
    Null,
}

impl Serialize for Answer {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Answer::Build(built) => built.reply().serialize(serializer),
            Answer::Nearby(reply) => reply.serialize(serializer),
            Answer::Installation(reply) => reply.serialize(serializer),
            Answer::Stats(reply) => reply.serialize(serializer),
            Answer::Explain(reply) => reply.serialize(serializer),
            Answer::Lint(reply) => reply.serialize(serializer),
            Answer::Config(reply) => reply.serialize(serializer),
            Answer::SessionOpen(reply) => reply.serialize(serializer),
            Answer::SessionAppend(reply) => reply.serialize(serializer),
            Answer::SessionCompact(reply) => reply.serialize(serializer),
            Answer::SessionMessages(reply) => reply.serialize(serializer),
            Answer::SessionExplain(reply) => reply.serialize(serializer),
            Answer::SessionRules(reply) => reply.serialize(serializer),
            Answer::Recall(reply) => reply.serialize(serializer),
            Answer::Remember(reply) => reply.serialize(serializer),
            Answer::Forget(reply) => reply.serialize(serializer),
            Answer::Null => serializer.serialize_unit(),
        }
    }
}

impl From<Built> for Answer {
    fn from(built: Built) -> Self {
        Answer::Build(Box::new(built))
    }
}

impl Server {
    /// A server over `engine`; without a watcher every request first rescans every path the
    /// graph knows.
    pub fn new(engine: Engine, watcher: Option<Watcher>) -> Self {
        Self { host: Host::new(engine), watcher, untracked_since: None }
    }

    /// Fetch remote documents (org config, `instructions` URLs) for the workspaces served.
    /// Without it, URLs stay unfetched and add no block.
    #[must_use]
    pub fn with_remote(mut self, remote: RemoteRefresh) -> Self {
        self.host.set_remote(remote);
        self
    }

    /// Serves requests from `input` until it ends or a `shutdown` arrives.
    pub fn run(&mut self, mut input: impl BufRead, mut output: impl Write) -> io::Result<()> {
        let mut line = Vec::new();
        loop {
            let reply = match next_line(&mut input, &mut line)? {
                Incoming::End => break,
                Incoming::Blank => continue,
                Incoming::Refused(reply) => Reply { line: Some(reply), shutdown: false },
                Incoming::Text(text) => self.handle_line(text),
            };
            if let Some(text) = reply.line {
                output.write_all(text.as_bytes())?;
                output.write_all(b"\n")?;
                output.flush()?;
            }
            self.track_new_inputs();
            if reply.shutdown {
                break;
            }
        }
        Ok(())
    }

    /// Handles one line of input: a request, a notification, or a batch of them.
    pub fn handle_line(&mut self, line: &str) -> Reply {
        let mut shutdown = false;
        // The usual line, one request object, is read into its members: a host's unchanged
        // turn spent half its time building maps for it. A `build` is read straight into
        // its params; any other object into JSON values. Anything else, an invalid object
        // included, takes the general path below and gets its error there.
        if line.trim_start().starts_with('{') {
            if let Ok(request) = serde_json::from_str::<Request<BuildParams>>(line)
                && request.method.as_ref().and_then(Value::as_str) == Some("build")
            {
                let response = request.envelope_error().or_else(|| {
                    self.answer(request, |server, _, params| match params {
                        Some(params) => server.build(params),
                        None => server.build(parse_params(None)?),
                    })
                });
                return Reply { line: response.map(|response| to_line(&response)), shutdown };
            }
            if let Ok(request) = serde_json::from_str::<Request>(line) {
                let response = self.handle_value_request(request, &mut shutdown);
                return Reply { line: response.map(|response| to_line(&response)), shutdown };
            }
        }
        let value = match parse_line(line) {
            Ok(value) => value,
            Err(reply) => return Reply { line: Some(reply), shutdown: false },
        };
        let line = match value {
            Value::Array(items) if items.is_empty() => {
                let error = RpcError::new(code::INVALID_REQUEST, "empty batch");
                Some(to_line(&error_response(Value::Null, error)))
            }
            Value::Array(items) => {
                let responses: Vec<Response> =
                    items.into_iter().filter_map(|item| self.handle_one(item, &mut shutdown)).collect();
                (!responses.is_empty()).then(|| batch_line(&responses))
            }
            single => self.handle_one(single, &mut shutdown).map(|response| to_line(&response)),
        };
        Reply { line, shutdown }
    }

    /// One element of a line; `None` when it is a notification (no `id`).
    fn handle_one(&mut self, request: Value, shutdown: &mut bool) -> Option<Response> {
        let Value::Object(mut request) = request else {
            return Some(not_an_object());
        };
        let request = Request {
            jsonrpc: request.remove("jsonrpc"),
            id: request.remove("id"),
            method: request.remove("method"),
            params: request.remove("params"),
        };
        self.handle_value_request(request, shutdown)
    }

    /// A request whose params are JSON: checked, then dispatched by method.
    fn handle_value_request(&mut self, request: Request, shutdown: &mut bool) -> Option<Response> {
        if let Some(error) =
            request.envelope_error().or_else(|| params_error(request.id.as_ref(), request.params.as_ref()))
        {
            return Some(error);
        }
        self.answer(request, |server, method, params| server.dispatch(method, params, shutdown))
    }

    /// Dispatches a request whose envelope was checked; `None` for a notification.
    fn answer<P>(
        &mut self,
        request: Request<P>,
        dispatch: impl FnOnce(&mut Self, &str, Option<P>) -> Result<Answer, RpcError>,
    ) -> Option<Response> {
        let Request { id, method, params, .. } = request;
        let result = dispatch(self, method.as_ref().and_then(Value::as_str).unwrap_or_default(), params);
        let id = id?;
        Some(match result {
            Ok(answer) => Response { jsonrpc: "2.0", id, outcome: Outcome::Result(answer) },
            Err(error) => error_response(id, error),
        })
    }

    fn dispatch(
        &mut self,
        method: &str,
        params: Option<Value>,
        shutdown: &mut bool,
    ) -> Result<Answer, RpcError> {
        Ok(match method {
            "build" => self.build(parse_params(params)?)?,
            "nearby" => {
                let params: NearbyParams = parse_params(params)?;
                self.catch_up();
                Answer::Nearby(Box::new(NearbyReply(self.host.nearby(params)?)))
            }
            "installation" => {
                let params: InstallationParams = parse_params(params)?;
                Answer::Installation(self.host.installation(params)?)
            }
            "stats" => Answer::Stats(self.stats()),
            "shutdown" => {
                *shutdown = true;
                Answer::Null
            }
            "explain" => {
                let (ws, _, params) = self.in_workspace::<ExplainParams>(params, Scope::Workspace)?;
                Answer::Explain(Box::new(self.host.explain(ws, params)?))
            }
            "lint" => {
                let (ws, _, params) = self.in_workspace::<LintParams>(params, Scope::Workspace)?;
                Answer::Lint(self.host.lint(ws, params)?)
            }
            "config" => {
                let (ws, _, params) = self.in_workspace(params, Scope::Workspace)?;
                Answer::Config(self.host.config(ws, params)?)
            }
            "session/open" => {
                let params: SessionOpenParams = parse_params(params)?;
                Answer::SessionOpen(self.host.session_open(params)?)
            }
            "session/append" => {
                let params: SessionAppendParams = parse_params(params)?;
                Answer::SessionAppend(self.host.session_append(params)?)
            }
            "session/compact" => {
                let (ws, _, params) = self.in_workspace::<SessionCompactParams>(params, Scope::Workspace)?;
                Answer::SessionCompact(Box::new(self.host.session_compact(ws, params)?))
            }
            "session/messages" => {
                let params: SessionParams = parse_params(params)?;
                Answer::SessionMessages(self.host.session_messages(params)?)
            }
            "session/explain" => {
                let (ws, _, params) = self.in_workspace::<SessionExplainParams>(params, Scope::Workspace)?;
                Answer::SessionExplain(Box::new(self.host.session_explain(ws, params)?))
            }
            "session/rules" => {
                let (ws, _, params) = self.in_workspace::<SessionRulesParams>(params, Scope::Workspace)?;
                Answer::SessionRules(Box::new(self.host.session_rules(ws, params)?))
            }
            "memory/recall" => {
                let (ws, session, params) =
                    self.in_workspace::<RecallParams>(params, Scope::WorkspaceAndSession)?;
                Answer::Recall(self.host.recall(ws, session.as_deref(), params)?)
            }
            "memory/remember" => {
                let (ws, session, params) =
                    self.in_workspace::<RememberParams>(params, Scope::WorkspaceAndSession)?;
                Answer::Remember(self.host.remember(ws, session.as_deref(), params)?)
            }
            "memory/forget" => {
                let (ws, session, params) =
                    self.in_workspace::<ForgetParams>(params, Scope::WorkspaceAndSession)?;
                Answer::Forget(self.host.forget(ws, session.as_deref(), params)?)
            }
            other => return Err(RpcError::new(code::METHOD_NOT_FOUND, format!("no method {other:?}"))),
        })
    }

    fn build(&mut self, params: BuildParams) -> Result<Answer, RpcError> {
        self.catch_up();
        Ok(self.host.build(params)?.into())
    }

    /// A method's params with its scope taken out of them: `cwd` (required) and, for the
    /// memory methods, `session`; then the workspace, caught up with the world.
    fn in_workspace<T: for<'de> Deserialize<'de>>(
        &mut self,
        params: Option<Value>,
        scope: Scope,
    ) -> Result<(Workspace, Option<String>, T), RpcError> {
        let mut params = match params {
            None => serde_json::Map::new(),
            Some(Value::Object(params)) => params,
            Some(_) => return Err(RpcError::new(code::INVALID_PARAMS, "invalid params: expected an object")),
        };
        let field =
            |err: serde_json::Error| RpcError::new(code::INVALID_PARAMS, format!("invalid params: {err}"));
        let cwd: PathBuf = match params.remove("cwd") {
            Some(cwd) => serde_json::from_value(cwd).map_err(field)?,
            None => return Err(RpcError::new(code::INVALID_PARAMS, "invalid params: missing field `cwd`")),
        };
        let session: Option<String> = match (scope, params.remove("session")) {
            (Scope::WorkspaceAndSession, Some(session)) => serde_json::from_value(session).map_err(field)?,
            // Not this method's: left for its params to refuse as an unknown field.
            (_, Some(session)) => {
                params.insert("session".to_owned(), session);
                None
            }
            (_, None) => None,
        };
        let params = serde_json::from_value(Value::Object(params)).map_err(field)?;
        self.catch_up();
        let ws = self.host.workspace(&cwd)?;
        Ok((ws, session, params))
    }

    fn stats(&mut self) -> StatsReply {
        // The counts include what the last request read.
        self.track_new_inputs();
        let executions = self.host.engine.executions();
        StatsReply {
            executions: executions.totals(),
            total_executions: executions.total(),
            inputs: self.host.engine.input_count(),
            watching: self.watcher.as_ref().is_some_and(|w| !w.is_degraded()),
            watched_dirs: self.watcher.as_ref().map_or(0, |w| w.watched().len()),
        }
    }

    /// Brings the inputs up to date with every write that completed before the request
    /// arrived: the watcher's events up to a sync point, or a rescan when there is no
    /// watcher to rely on (or it could not vouch for its events in time). The request
    /// about to run reads the world: what it reads is watched after the reply
    /// ([`Server::track_new_inputs`]).
    fn catch_up(&mut self) {
        self.track_new_inputs();
        let started = ctxgraph_engine::watch::status_clock();
        let engine = &mut self.host.engine;
        let synced = match &mut self.watcher {
            Some(watcher) if !watcher.is_degraded() => match watcher.sync_point(COOKIE_TIMEOUT) {
                Some(batch) => {
                    watcher.apply(engine, &batch);
                    true
                }
                None => false,
            },
            _ => false,
        };
        if !synced {
            // Whatever was reported is covered by the rescan.
            if let Some(watcher) = &mut self.watcher {
                watcher.pending();
            }
            engine.apply_changes(&[ChangeEvent::Rescan]);
        }
        if self.watcher.is_some() {
            self.untracked_since.get_or_insert(started);
        }
    }

    /// Watches the paths the requests since the last call read for the first time.
    /// [`Server::run`] calls it after each reply is written, so a first build does not wait
    /// for thousands of watches to be added; every request calls it before it reads. Writes between a
    /// request's read and the watch are found by the watcher's `ctime` check, so none is
    /// lost. Hosts calling [`Server::handle_line`] themselves call it after sending a reply.
    pub fn track_new_inputs(&mut self) {
        // The common turn read nothing new: nothing to do, so `run` is back in `read` at
        // once. (Any work between a reply and that `read` keeps the client, woken by the
        // reply, from running on this core: on a VM that cost an unchanged turn 70 µs.)
        if let (Some(watcher), Some(since)) = (&mut self.watcher, self.untracked_since.take())
            && watcher.has_new_inputs(&self.host.engine)
        {
            watcher.track(&mut self.host.engine, since);
        }
    }
}

/// A request object's members (any others are ignored), each kept as it is, present or
/// not (`"id": null` is not a notification). `params` are JSON, or a method's own params.
#[derive(Deserialize)]
#[serde(bound = "P: Deserialize<'de>")]
struct Request<P = Value> {
    #[serde(default, deserialize_with = "present")]
    jsonrpc: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    id: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    method: Option<Value>,
    #[serde(default = "Option::default", deserialize_with = "present")]
    params: Option<P>,
}

impl<P> Request<P> {
    /// The error response for an envelope that is not a request.
    fn envelope_error(&self) -> Option<Response> {
        envelope_error(self.jsonrpc.as_ref(), self.id.as_ref(), self.method.as_ref())
    }
}

/// The error response for members that do not make a request's envelope.
fn envelope_error(jsonrpc: Option<&Value>, id: Option<&Value>, method: Option<&Value>) -> Option<Response> {
    let id_valid = matches!(id, None | Some(Value::Null | Value::String(_) | Value::Number(_)));
    let version_valid = jsonrpc.and_then(Value::as_str) == Some("2.0");
    let method_valid = method.is_some_and(Value::is_string);
    if id_valid && version_valid && method_valid {
        return None;
    }
    let message =
        "a request needs \"jsonrpc\": \"2.0\", a string \"method\" and a string, number or null \"id\"";
    let id = if id_valid { id.cloned().unwrap_or(Value::Null) } else { Value::Null };
    Some(error_response(id, RpcError::new(code::INVALID_REQUEST, message)))
}

/// The error response for `params` that are neither an object nor an array (JSON-RPC 2.0:
/// "a Structured value"). `id` was checked by [`envelope_error`].
fn params_error(id: Option<&Value>, params: Option<&Value>) -> Option<Response> {
    if matches!(params, None | Some(Value::Object(_) | Value::Array(_))) {
        return None;
    }
    let error = RpcError::new(code::INVALID_REQUEST, "\"params\" must be an object or an array");
    Some(error_response(id.cloned().unwrap_or(Value::Null), error))
}

fn not_an_object() -> Response {
    error_response(Value::Null, RpcError::new(code::INVALID_REQUEST, "a request must be a JSON object"))
}

/// A member that is there, `null` included.
fn present<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(value: D) -> Result<Option<T>, D::Error> {
    T::deserialize(value).map(Some)
}

fn parse_params<T: for<'de> Deserialize<'de>>(params: Option<Value>) -> Result<T, RpcError> {
    let params = params.unwrap_or_else(|| Value::Object(serde_json::Map::default()));
    serde_json::from_value(params)
        .map_err(|err| RpcError::new(code::INVALID_PARAMS, format!("invalid params: {err}")))
}

fn error_response(id: Value, error: RpcError) -> Response {
    let error = ErrorObject { code: error.code, message: error.message };
    Response { jsonrpc: "2.0", id, outcome: Outcome::Error(error) }
}

/// What of a reply is the prompt text an agent sends, shown as it is; every other string
/// goes through the process's one redaction (`ctxgraph_db::secrets`), so the ids, sources,
/// URLs, messages and findings of `serve` and `mcp` print no secret.
#[derive(Clone, Copy)]
pub(crate) enum Verbatim {
    /// The strings under these object keys (a build's and a read's `text`).
    Keys(&'static [&'static str]),
    /// All of it: a session's next messages and its summary request are what is sent.
    All,
}

/// The `text` of a build or a read.
pub(crate) const PROMPT_TEXT: Verbatim = Verbatim::Keys(&["text"]);
/// Nothing: an explanation, findings, a config, an error.
pub(crate) const NOTHING: Verbatim = Verbatim::Keys(&[]);

/// `reply` as one line of JSON, redacted but for what `verbatim` keeps, written in one pass
/// (no JSON tree on the way: for a 145 KB `build` reply the tree cost two thirds of the turn).
pub(crate) fn redacted_json(reply: &impl Serialize, verbatim: Verbatim) -> Result<String, serde_json::Error> {
    match verbatim {
        Verbatim::All => serde_json::to_string(reply),
        Verbatim::Keys(keys) => ctxgraph_engine::secrets::redactor().json_string_except(reply, keys),
    }
}

impl Response {
    fn verbatim(&self) -> Verbatim {
        match &self.outcome {
            Outcome::Result(Answer::SessionMessages(_) | Answer::SessionCompact(_)) => Verbatim::All,
            Outcome::Result(Answer::Build(_) | Answer::Nearby(_)) => PROMPT_TEXT,
            _ => NOTHING,
        }
    }
}

/// One response line. Serialising these types cannot fail (string keys, no non-finite
/// floats); should it ever, the client gets an internal error rather than nothing.
fn to_line(response: &Response) -> String {
    line_or_internal_error(redacted_json(response, response.verbatim()))
}

/// A batch's line: each response redacted as it says.
fn batch_line(responses: &[Response]) -> String {
    let lines: Result<Vec<String>, _> = responses.iter().map(|r| redacted_json(r, r.verbatim())).collect();
    line_or_internal_error(lines.map(|lines| format!("[{}]", lines.join(","))))
}

fn line_or_internal_error(line: Result<String, serde_json::Error>) -> String {
    line.unwrap_or_else(|_| {
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error"}}"#.to_owned()
    })
}

/// The longest request line served (in bytes); a longer one is skipped to its end and refused, so a
/// client cannot make the server buffer without bound.
pub const MAX_REQUEST_BYTES: usize = 8 * 1024 * 1024;

// The line framing below is shared with `ctxgraph mcp`, whose MCP layer (rmcp) would leave
// an over-long, non-UTF-8 or unparsable line unanswered: every line it serves passes these
// same checks first, so both servers answer a bad line alike.

/// One line of input, as far as the framing goes.
pub enum Incoming<'a> {
    /// The input ended.
    End,
    /// Only whitespace: nothing to answer.
    Blank,
    /// A line of UTF-8 text, for the server to parse.
    Text(&'a str),
    /// A line refused before parsing (over [`MAX_REQUEST_BYTES`], not UTF-8): the reply.
    Refused(String),
}

/// Reads the next line of `input` into `buf` (never more than [`MAX_REQUEST_BYTES`] of it).
pub fn next_line<'a>(input: &mut impl BufRead, buf: &'a mut Vec<u8>) -> io::Result<Incoming<'a>> {
    Ok(match read_line(input, buf, MAX_REQUEST_BYTES)? {
        Line::End => Incoming::End,
        Line::TooLong => {
            let message = format!("invalid request: the line is over {MAX_REQUEST_BYTES} bytes");
            Incoming::Refused(error_line(Value::Null, code::INVALID_REQUEST, message))
        }
        Line::Read => match std::str::from_utf8(buf) {
            Ok(text) if text.trim().is_empty() => Incoming::Blank,
            Ok(text) => Incoming::Text(text),
            // Not UTF-8: one bad request, not the end of the session.
            Err(_) => Incoming::Refused(error_line(
                Value::Null,
                code::PARSE_ERROR,
                "parse error: the line is not UTF-8",
            )),
        },
    })
}

/// A line's JSON value, or the parse error reply. `serde_json` stops at 128 levels of
/// nesting, so a deeply nested line is refused here, not by a stack overflow.
pub fn parse_line(line: &str) -> Result<Value, String> {
    serde_json::from_str(line)
        .map_err(|err| error_line(Value::Null, code::PARSE_ERROR, format!("parse error: {err}")))
}

/// The reply refusing `value` as one JSON-RPC 2.0 request (not an object; no `"jsonrpc":
/// "2.0"`, string `method` or valid `id`; `params` neither an object nor an array), or
/// `None` when it is a well-formed request or notification.
pub fn request_error(value: &Value) -> Option<String> {
    let Value::Object(request) = value else { return Some(to_line(&not_an_object())) };
    let id = request.get("id");
    envelope_error(request.get("jsonrpc"), id, request.get("method"))
        .or_else(|| params_error(id, request.get("params")))
        .map(|response| to_line(&response))
}

/// An error response line.
pub fn error_line(id: Value, code: i64, message: impl Into<String>) -> String {
    to_line(&error_response(id, RpcError::new(code, message)))
}

enum Line {
    /// `buf` holds the next line, without its newline.
    Read,
    /// The line was longer than the limit; it has been consumed and dropped.
    TooLong,
    End,
}

/// `BufRead::read_until` with a cap: never holds more than `limit` bytes of one line.
fn read_line(input: &mut impl BufRead, buf: &mut Vec<u8>, limit: usize) -> io::Result<Line> {
    buf.clear();
    let mut too_long = false;
    let mut read_any = false;
    loop {
        let available = match input.fill_buf() {
            Ok(available) => available,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        if available.is_empty() {
            return Ok(match (read_any, too_long) {
                (false, _) => Line::End,
                (true, true) => Line::TooLong,
                (true, false) => Line::Read,
            });
        }
        read_any = true;
        let (chunk, done) = match available.iter().position(|&b| b == b'\n') {
            Some(end) => (&available[..end], Some(end + 1)),
            None => (available, None),
        };
        if !too_long {
            if buf.len() + chunk.len() > limit {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(chunk);
            }
        }
        let consumed = done.unwrap_or(available.len());
        input.consume(consumed);
        if done.is_some() {
            return Ok(if too_long { Line::TooLong } else { Line::Read });
        }
    }
}

#[cfg(test)]
mod line_tests {
    use super::*;

    #[test]
    fn lines_are_capped_and_the_rest_is_skipped() {
        let mut input = io::Cursor::new(b"short\n0123456789abcdef\nnext\nlast".to_vec());
        let mut buf = Vec::new();
        let mut seen = Vec::new();
        loop {
            match read_line(&mut input, &mut buf, 8).unwrap() {
                Line::Read => seen.push(String::from_utf8(buf.clone()).unwrap()),
                Line::TooLong => seen.push("<too long>".to_owned()),
                Line::End => break,
            }
        }
        assert_eq!(seen, ["short", "<too long>", "next", "last"]);
    }
}
