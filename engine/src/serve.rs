//! `ctxgraph serve --stdio`: JSON-RPC 2.0 over newline-delimited JSON, for agent hosts.
//!
//! One request per line in, one response per line out. The engine stays warm between
//! requests, so a build after a turn with no file changes executes no query at all. Before
//! every request that reads the world, the server applies what the watcher reported (or,
//! without a watcher, rescans every path the graph knows), so answers are never stale.
//!
//! Methods: `build {cwd, section?, model?, known_hash?}`, `nearby {file, cwd}`,
//! `installation {texts}`, `stats`, `shutdown` (the messages are in [`crate::protocol`]).
//! A bad request gets a JSON-RPC error and the server keeps serving.
//!
//! The framing (one JSON value per line, `jsonrpc`/`id`/`method`/`params`, the standard
//! error codes) is a few lines of `serde_json` here: JSON-RPC crates bring a transport and
//! an async runtime around it, and the protocol needs neither. `ctxgraph mcp` reads its
//! lines through the same framing ([`next_line`], [`parse_line`], [`request_error`]).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{self, BufRead, Write};
use std::path::Path;
use std::time::SystemTime;

use ctxgraph_db::agent::Agent;
use ctxgraph_db::hash::ContentHash;
use ctxgraph_db::installation::{InstallationState, asset, known_assets, known_versions};
use ctxgraph_db::profile;
use ctxgraph_db::{Db, Workspace};
use ctxgraph_opencode::message::MessageOptions;
use ctxgraph_opencode::prompt::{ModelRef, Section};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::protocol::{
    AgentBlock, AgentBuildReply, Answer, BuildParams, ErrorObject, InstallationParams, InstallationReply,
    Known, NearbyParams, Outcome, Response, SectionParam, StatsReply,
};
use crate::watch::{COOKIE_TIMEOUT, Watcher};

#[path = "serve_session.rs"]
mod session;
use crate::{ChangeEvent, Engine, EngineError, RemoteRefresh, Turns};

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

/// One client's server: a warm engine, that client's previous builds, and what keeps the
/// engine's inputs current (a watcher, or a rescan per request).
pub struct Server {
    engine: Engine,
    turns: Turns,
    /// `None`: rescan every known path before each request instead.
    watcher: Option<Watcher>,
    remote: Option<RemoteRefresh>,
    /// The hash of the last build sent per text, so a `known_hash` can be trusted.
    sent: HashMap<(Workspace, Section, MessageOptions), String>,
    /// Whether the opencode installation was looked for (once, at the first request that
    /// needs its texts: a message build or `installation`).
    installation_loaded: bool,
    /// When the earliest request whose reads are not yet watched started.
    untracked_since: Option<SystemTime>,
    /// Each agent's own wording (Claude Code's CC10, …), loaded from its installation on
    /// the first build for that agent.
    wordings: HashMap<Agent, Option<std::sync::Arc<dyn std::any::Any + Send + Sync>>>,
    /// Sessions opened with `session/open`, by session id.
    sessions: session::Sessions,
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

impl From<EngineError> for RpcError {
    fn from(err: EngineError) -> Self {
        RpcError::new(code::BUILD_FAILED, err.to_string())
    }
}

/// What handling one line produced.
pub struct Reply {
    /// The response line, without the newline; `None` for notifications.
    pub line: Option<String>,
    /// A `shutdown` was received: stop reading after writing this reply.
    pub shutdown: bool,
}

impl Server {
    /// A server over `engine`; without a watcher every request first rescans every path the
    /// graph knows.
    pub fn new(engine: Engine, watcher: Option<Watcher>) -> Self {
        Self {
            engine,
            turns: Turns::default(),
            watcher,
            remote: None,
            sent: HashMap::new(),
            installation_loaded: false,
            untracked_since: None,
            wordings: HashMap::new(),
            sessions: session::Sessions::default(),
        }
    }

    /// Fetch remote documents (org config, `instructions` URLs) for the workspaces served.
    /// Without it, URLs stay unfetched and add no block.
    #[must_use]
    pub fn with_remote(mut self, remote: RemoteRefresh) -> Self {
        self.remote = Some(remote);
        self
    }

    /// The workspace for `cwd`, with its remote documents loaded when due.
    fn workspace(&mut self, cwd: &Path) -> Result<Workspace, RpcError> {
        let ws = self.engine.open(cwd)?;
        if let Some(remote) = &mut self.remote {
            remote.refresh(&mut self.engine, ws)?;
        }
        Ok(ws)
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
                (!responses.is_empty()).then(|| to_line(&responses))
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
        match method {
            "build" => {
                let params: BuildParams = parse_params(params)?;
                self.build(params)
            }
            "nearby" => {
                let params: NearbyParams = parse_params(params)?;
                self.nearby(params)
            }
            "installation" => {
                let params: InstallationParams = parse_params(params)?;
                self.installation(params).map(Answer::Installation)
            }
            "stats" => Ok(Answer::Stats(self.stats())),
            "shutdown" => {
                *shutdown = true;
                Ok(Answer::Null)
            }
            other => self.session_method(other, params).map_or_else(
                || Err(RpcError::new(code::METHOD_NOT_FOUND, format!("no method {other:?}"))),
                |answer| answer.map(Answer::Json),
            ),
        }
    }

    fn build(&mut self, params: BuildParams) -> Result<Answer, RpcError> {
        let agent = match params.agent.as_deref().map(str::parse::<Agent>) {
            None => Agent::Opencode,
            Some(Ok(agent)) => agent,
            Some(Err(message)) => {
                return Err(RpcError::new(code::INVALID_PARAMS, format!("agent: {message}")));
            }
        };
        if agent != Agent::Opencode {
            return self.agent_build(agent, params);
        }
        let model = match params.model.as_deref().map(str::parse::<ModelRef>) {
            Some(Err(message)) => {
                return Err(RpcError::new(code::INVALID_PARAMS, format!("model: {message}")));
            }
            Some(Ok(model)) => Some(model),
            None => None,
        };
        let section = match params.section.unwrap_or(SectionParam::System) {
            SectionParam::System => Section::System,
            SectionParam::Environment => Section::Environment,
            SectionParam::Instructions => Section::Instructions,
            SectionParam::Message => Section::Message,
        };
        if section == Section::Message {
            self.load_installation();
        }
        let options = MessageOptions {
            model,
            agent: params.opencode_agent.unwrap_or_else(|| "build".to_owned()),
            json_schema: params.json_schema,
            user_system: params.user_system,
        };
        self.catch_up();
        // Counted from here: loading remote documents for a new workspace runs queries too.
        let before = self.engine.db().executions().total();
        let ws = self.workspace(&params.cwd)?;
        let turn = self.turns.build_message(&self.engine, ws, section, options.clone());
        let turn = turn?;
        let executed = self.engine.db().executions().total() - before;
        let key = (ws, section, crate::turn::same_text(options));
        let sent = self.sent.get(&key);
        let known = match (&params.known_hash, sent) {
            (Some(known), _) if *known == turn.layout.hash => Known::Current,
            (Some(known), Some(sent)) if known == sent => Known::PreviousBuild,
            _ => Known::Nothing,
        };
        // Most turns send the hash they sent last: nothing to store.
        if sent != Some(&turn.layout.hash) {
            self.sent.insert(key, turn.layout.hash.clone());
        }
        Ok(Answer::Build { turn, known, executed })
    }

    /// `build` for an agent other than opencode: its profile's layout, the text and the
    /// files it carries, each with why.
    fn agent_build(&mut self, agent: Agent, params: BuildParams) -> Result<Answer, RpcError> {
        let opencode_only = params.section.is_some()
            || params.model.is_some()
            || params.opencode_agent.is_some()
            || params.json_schema
            || params.user_system.is_some();
        if opencode_only {
            return Err(RpcError::new(
                code::INVALID_PARAMS,
                "section, model, opencode_agent, json_schema and user_system describe opencode's system message; this agent has none of them".to_owned(),
            ));
        }
        // The agent's own wording, looked for once per server (an installation does not
        // change under a running host).
        let wording = self
            .wordings
            .entry(agent)
            .or_insert_with(|| crate::wording::load(agent, None, &crate::HostEnv::from_process().vars))
            .clone();
        let request = profile::Request { settings: Vec::new(), wording };
        self.catch_up();
        let before = self.engine.db().executions().total();
        let ws = self.workspace(&params.cwd)?;
        let layout = self.engine.agent_layout(ws, agent, &request)?;
        let executed = self.engine.db().executions().total() - before;
        let hash = layout.hash.map_or_else(|| ContentHash::of("").to_string(), |h| h.to_string());
        let unchanged = params.known_hash.as_deref() == Some(hash.as_str());
        let unavailable = match &layout.wording {
            profile::WordingSource::Unavailable { reason } => Some(reason.clone()),
            _ => None,
        };
        let blocks = layout
            .blocks
            .iter()
            .map(|block| AgentBlock { text: layout.text_of(block).to_owned(), block: block.clone() })
            .collect();
        Ok(Answer::AgentBuild(AgentBuildReply {
            agent: layout.agent,
            bytes: layout.text.len(),
            hash,
            text: (!unchanged).then_some(layout.text),
            blocks: (!unchanged).then_some(blocks),
            executed,
            unchanged,
            unavailable,
        }))
    }

    fn nearby(&mut self, params: NearbyParams) -> Result<Answer, RpcError> {
        if params.session.is_some() {
            return self.session_nearby(params).map(Answer::Json);
        }
        self.catch_up();
        let ws = self.workspace(&params.cwd)?;
        let nearby = self.engine.nearby(ws, &params.file);
        Ok(Answer::Nearby(nearby?))
    }

    /// L1, once per server: opencode's texts come from the installation found at the first
    /// request that needs them.
    fn load_installation(&mut self) {
        if !self.installation_loaded {
            self.engine.load_installation(&crate::installation::Locate::from_process());
            self.installation_loaded = true;
        }
    }

    /// opencode's texts by asset name, so that a client placed inside opencode's own text
    /// (the opencode plugin) can find where opencode's blocks begin without carrying their
    /// words. A name no release's table has is a bad request.
    fn installation(&mut self, params: InstallationParams) -> Result<InstallationReply, RpcError> {
        let names: BTreeSet<&str> = known_versions()
            .filter_map(known_assets)
            .flat_map(|table| table.keys().map(String::as_str))
            .collect();
        if let Some(unknown) = params.texts.iter().find(|name| !names.contains(name.as_str())) {
            let known = names.into_iter().collect::<Vec<_>>().join(", ");
            let message = format!("texts: opencode has no text named {unknown:?} (names: {known})");
            return Err(RpcError::new(code::INVALID_PARAMS, message));
        }
        self.load_installation();
        let db = self.engine.db();
        let (binary, version) = match db.installation().state(db) {
            InstallationState::Found(found) => (Some(found.binary.clone()), Some(found.version.clone())),
            InstallationState::Missing { .. } => (None, None),
        };
        let mut reply =
            InstallationReply { binary, version, texts: BTreeMap::new(), unavailable: BTreeMap::new() };
        for name in params.texts {
            match asset(db, db.installation(), &name) {
                Ok(text) => reply.texts.insert(name, text.to_string()),
                Err(missing) => reply.unavailable.insert(name, missing.reason),
            };
        }
        Ok(reply)
    }

    fn stats(&mut self) -> StatsReply {
        // The counts include what the last request read.
        self.track_new_inputs();
        let executions = self.engine.db().executions();
        StatsReply {
            executions: executions.totals(),
            total_executions: executions.total(),
            inputs: self.engine.db().files().len(),
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
        let started = crate::watch::status_clock();
        let synced = match &mut self.watcher {
            Some(watcher) if !watcher.is_degraded() => match watcher.sync_point(COOKIE_TIMEOUT) {
                Some(batch) => {
                    watcher.apply(&mut self.engine, &batch);
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
            self.engine.apply_changes(&[ChangeEvent::Rescan]);
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
            && watcher.has_new_inputs(&self.engine)
        {
            watcher.track(&mut self.engine, since);
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

/// One response line. Serialising these types cannot fail (string keys, no non-finite
/// floats); should it ever, the client gets an internal error rather than nothing.
fn to_line(response: &impl Serialize) -> String {
    serde_json::to_string(response).unwrap_or_else(|_| {
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
