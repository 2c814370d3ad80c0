//! The session methods of `serve`: `session/open`, `session/append`, `session/compact`,
//! `session/messages`, and `nearby` with `session`. Every answer comes from the warm
//! graph: an append re-runs the queries of the new message and the session-level ones.

use std::collections::HashMap;
use std::path::PathBuf;

use ctxgraph_opencode::session::Session;
use ctxgraph_opencode::session::compaction::{DEFAULT_SUMMARY_TEMPLATE, summary_request};
use ctxgraph_opencode::session::export::ExportMessage;
use ctxgraph_opencode::session::reads::ReadPoint;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{RpcError, Server, code, parse_params};
use crate::LimitOverrides;
use crate::protocol::NearbyParams;

pub(super) type Sessions = HashMap<String, Session>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OpenParams {
    /// An export file to read…
    #[serde(default)]
    path: Option<PathBuf>,
    /// …or the export itself.
    #[serde(default)]
    export: Option<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AppendParams {
    session: String,
    message: Value,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CompactParams {
    session: String,
    cwd: PathBuf,
    #[serde(default)]
    context: Option<u64>,
    #[serde(default)]
    input: Option<u64>,
    #[serde(default)]
    output: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SessionParams {
    session: String,
}

fn invalid(message: impl Into<String>) -> RpcError {
    RpcError::new(code::INVALID_PARAMS, message)
}

impl Server {
    /// `None` when `method` is not a session method.
    pub(super) fn session_method(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> Option<Result<Value, RpcError>> {
        Some(match method {
            "session/open" => parse_params(params).and_then(|p| self.session_open(p)),
            "session/append" => parse_params(params).and_then(|p| self.session_append(p)),
            "session/compact" => parse_params(params).and_then(|p| self.session_compact(p)),
            "session/messages" => parse_params(params).and_then(|p| self.session_messages(p)),
            _ => return None,
        })
    }

    fn session(&self, id: &str) -> Result<Session, RpcError> {
        self.sessions.get(id).copied().ok_or_else(|| invalid(format!("no open session {id:?}")))
    }

    fn session_open(&mut self, params: OpenParams) -> Result<Value, RpcError> {
        let (name, bytes) = match (params.path, params.export) {
            (Some(path), None) => {
                let bytes = crate::os::read_regular_file(&path)
                    .map_err(|e| invalid(format!("{}: {e}", path.display())))?;
                (path.display().to_string(), bytes)
            }
            (None, Some(export)) => ("export".to_owned(), export.to_string().into_bytes()),
            _ => return Err(invalid("give one of path, export")),
        };
        let session = self.engine.load_session(&name, &bytes).map_err(|e| invalid(e.to_string()))?;
        let id = session.info(self.engine.db()).id.clone();
        let messages = session.messages(self.engine.db()).len();
        self.sessions.insert(id.clone(), session);
        Ok(json!({ "session": id, "messages": messages }))
    }

    fn session_append(&mut self, params: AppendParams) -> Result<Value, RpcError> {
        let session = self.session(&params.session)?;
        let bytes = params.message.to_string();
        let message: ExportMessage = ctxgraph_opencode::session::export::parse_message(bytes.as_bytes())
            .map_err(|e| invalid(format!("message: {e}")))?;
        self.engine.append_message(session, message);
        Ok(json!({ "messages": session.messages(self.engine.db()).len() }))
    }

    fn session_compact(&mut self, params: CompactParams) -> Result<Value, RpcError> {
        let session = self.session(&params.session)?;
        let ws = self.workspace(&params.cwd)?;
        let overrides =
            LimitOverrides { context: params.context, input: params.input, output: params.output };
        let plan_params = self.engine.plan_params(ws, session, overrides)?;
        let plan = self.engine.compaction_plan(session, plan_params);
        let mut value =
            serde_json::to_value(plan).map_err(|e| RpcError::new(code::BUILD_FAILED, e.to_string()))?;
        value["request"] = summary_request(DEFAULT_SUMMARY_TEMPLATE, plan).into();
        Ok(value)
    }

    fn session_messages(&mut self, params: SessionParams) -> Result<Value, RpcError> {
        let session = self.session(&params.session)?;
        Ok(json!({ "messages": self.engine.next_messages(session)? }))
    }

    pub(super) fn session_nearby(&mut self, params: NearbyParams) -> Result<Value, RpcError> {
        let session = self.session(params.session.as_deref().unwrap_or_default())?;
        self.catch_up();
        let ws = self.workspace(&params.cwd)?;
        let point = match params.message {
            Some(message) => ReadPoint::InMessage { message, before_part: None },
            None => ReadPoint::NextStep,
        };
        let read = self.engine.nearby_in_session(ws, session, &params.file, &point);
        Ok(json!(read?))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use ctxgraph_db::system::MemorySystem;
    use serde_json::{Value, json};

    use crate::serve::Server;
    use crate::{Engine, HostEnv};

    fn call(server: &mut Server, method: &str, params: Value) -> Value {
        let line = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
        let reply: Value =
            serde_json::from_str(&server.handle_line(&line).line.expect("reply")).expect("json");
        reply
    }

    #[test]
    fn a_session_is_opened_appended_to_and_answered() {
        let env = HostEnv {
            vars: std::collections::BTreeMap::default(),
            home: "/h".into(),
            platform: "linux".into(),
            date: "d".into(),
        };
        let mut server = Server::new(Engine::new(Arc::new(MemorySystem::default()), env), None);
        let user = |id: &str, text: &str| {
            json!({"info": {"id": id, "role": "user", "model": {"providerID": "p", "modelID": "m"}},
                   "parts": [{"type": "text", "id": format!("{id}-t"), "text": text}]})
        };
        let export = json!({"info": {"id": "ses_1"}, "messages": [user("m1", "hello")]});
        let opened = call(&mut server, "session/open", json!({"export": export}));
        assert_eq!(opened["result"], json!({"session": "ses_1", "messages": 1}));
        let appended =
            call(&mut server, "session/append", json!({"session": "ses_1", "message": user("m2", "again")}));
        assert_eq!(appended["result"]["messages"], 2);
        let messages = call(&mut server, "session/messages", json!({"session": "ses_1"}));
        assert_eq!(
            messages["result"]["messages"],
            json!([{"role": "user", "content": "hello"}, {"role": "user", "content": "again"}])
        );
        let bad = call(&mut server, "session/append", json!({"session": "ses_1", "message": {"info": {}}}));
        assert_eq!(bad["error"]["code"], -32602, "{bad}");
        assert!(bad["error"]["message"].as_str().unwrap().contains("$.info"), "{bad}");
        let unknown = call(&mut server, "session/messages", json!({"session": "nope"}));
        assert_eq!(unknown["error"]["code"], -32602);
    }
}
