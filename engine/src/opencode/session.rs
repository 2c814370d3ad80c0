//! Sessions as inputs: loading an export, appending messages, and the questions asked of
//! a session (compaction plan, next call's history, nearby rules in its state).

use std::collections::{HashMap, HashSet};
use std::path::Path;

use ctxgraph_db::system::FileKind;
use ctxgraph_db::{Db, Workspace};
use ctxgraph_opencode::explain::{SessionExplanation, explain_session};
use ctxgraph_opencode::nearby::ReadKind;
use ctxgraph_opencode::session::compaction::{
    CompactionPlan, DEFAULT_SUMMARY_TEMPLATE, ModelLimit, PlanParams, compaction_plan, summary_request,
};
use ctxgraph_opencode::session::convert::TargetModel;
use ctxgraph_opencode::session::export::{Export, ExportError, ExportMessage, PartKind, Role, parse_export};
use ctxgraph_opencode::session::history::next_call_messages;
use ctxgraph_opencode::session::reads::{ReadPoint, SessionNearby, nearby_in_session};
use ctxgraph_opencode::session::{Message, Session, SessionError};
use salsa::{Durability, Setter};
use serde_json::Value;

use ctxgraph_db::agent::Agent;
use ctxgraph_db::profile::{ReadLayout, Request};

use crate::{Engine, EngineError};

/// Each session's messages by id (the first of duplicates), so an append finds the message
/// it updates (or that there is none) without reading every message's input.
pub(crate) type MessageIds = HashMap<Session, HashMap<String, Message>>;

/// Model limits given on the command line; each overrides the config's value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LimitOverrides {
    /// The context window, in tokens (`--context`).
    pub context: Option<u64>,
    /// The input limit, for models that have one apart from the window (`--input`).
    pub input: Option<u64>,
    /// The output limit (`--output`): what opencode reserves for the answer.
    pub output: Option<u64>,
}

/// Why a session could not be loaded or answered.
#[derive(Debug, thiserror::Error)]
pub enum SessionFailure {
    /// The export is not valid: `error` has the JSON path and byte offset.
    #[error("{}: not an opencode session export: {error}", source_name)]
    Export {
        /// The file (or `<stdin>`, `<params>`) the export came from.
        source_name: String,
        /// What is wrong, and where.
        error: ExportError,
    },
    /// No limit for the model in the merged config, and none given on the command line.
    #[error(
        "no model limit known for {model}: the config has no provider.{provider}.models.{model_id}.limit.context; pass --context N (and --output N, --input N if the model has one)"
    )]
    NoLimit {
        /// `provider/model`, as the session names it.
        model: String,
        /// The provider part.
        provider: String,
        /// The model part.
        model_id: String,
    },
    /// No user message says which model the session uses.
    #[error("the session has no user message with a model; pass --model provider/model")]
    NoModel,
    /// The session's messages are inconsistent (reported by the queries).
    #[error(transparent)]
    Query(#[from] SessionError),
}

impl Engine {
    /// Loads an export read from `source_name` as a new session input.
    pub fn load_session(&mut self, source_name: &str, bytes: &[u8]) -> Result<Session, EngineError> {
        let export = parse_export(bytes)
            .map_err(|error| SessionFailure::Export { source_name: source_name.to_owned(), error })?;
        Ok(self.open_session(export))
    }

    /// The session's id, as its export names it.
    pub fn session_id(&self, session: Session) -> &str {
        &session.info(&self.db).id
    }

    /// How many messages the session holds.
    pub fn message_count(&self, session: Session) -> usize {
        session.messages(&self.db).len()
    }

    /// Appends one message given as `opencode export` JSON (see [`Engine::append_message`]).
    pub fn append_message_json(&mut self, session: Session, bytes: &[u8]) -> Result<(), ExportError> {
        let message = ctxgraph_opencode::session::export::parse_message(bytes)?;
        self.append_message(session, message);
        Ok(())
    }

    /// The summarizer's request for `plan` (K5), written from `template` (ctxgraph's own,
    /// [`DEFAULT_SUMMARY_TEMPLATE`], without one).
    pub fn summary_request(&self, plan: &CompactionPlan, template: Option<&str>) -> String {
        summary_request(template.unwrap_or(DEFAULT_SUMMARY_TEMPLATE), plan)
    }

    /// A new session input from a parsed export.
    pub fn open_session(&mut self, export: Export) -> Session {
        let messages = export.messages.into_iter().map(|m| self.new_message(m)).collect();
        // The list changes on every append; each message's content rarely does.
        Session::builder(export.info, messages).durability(Durability::LOW).new(&self.db)
    }

    fn new_message(&self, message: ExportMessage) -> Message {
        // MEDIUM: appending a message (a LOW change) leaves every memo that reads only
        // earlier messages verified without walking its dependencies.
        Message::builder(message.info, message.parts).durability(Durability::MEDIUM).new(&self.db)
    }

    /// Appends a message, or replaces the message with the same id (a message is updated
    /// while it streams). Setters run only for what changed.
    pub fn append_message(&mut self, session: Session, message: ExportMessage) {
        let existing = self.message_index(session).get(&message.info.id).copied();
        if let Some(existing) = existing {
            if *existing.info(&self.db) != message.info {
                existing.set_info(&mut self.db).with_durability(Durability::MEDIUM).to(message.info);
            }
            if *existing.parts(&self.db) != message.parts {
                existing.set_parts(&mut self.db).with_durability(Durability::MEDIUM).to(message.parts);
            }
        } else {
            let id = message.info.id.clone();
            let added = self.new_message(message);
            self.message_index(session).insert(id, added);
            let mut messages = session.messages(&self.db).clone();
            messages.push(added);
            session.set_messages(&mut self.db).to(messages);
        }
    }

    /// The session's messages by id (the first of duplicates), built on first use.
    fn message_index(&mut self, session: Session) -> &mut HashMap<String, Message> {
        let db = &self.db;
        self.message_ids.entry(session).or_insert_with(|| {
            let mut ids = HashMap::new();
            for &message in session.messages(db) {
                ids.entry(message.id(db).to_owned()).or_insert(message);
            }
            ids
        })
    }

    /// What the compaction stage works with: the model (the `compaction` agent's, else the
    /// session's last user message's), its limits and the `compaction` config.
    pub fn plan_params(
        &self,
        ws: Workspace,
        session: Session,
        overrides: LimitOverrides,
    ) -> Result<PlanParams, EngineError> {
        let config = self.merged_config(ws)?;
        let target = config
            .compaction_model()
            .map(|(provider_id, model_id)| TargetModel { provider_id, model_id })
            .or_else(|| self.session_model(session))
            .ok_or(SessionFailure::NoModel)?;
        let configured = config.model_limit(&target.provider_id, &target.model_id);
        let context = overrides.context.or(configured.context);
        let Some(context) = context else {
            return Err(SessionFailure::NoLimit {
                model: format!("{}/{}", target.provider_id, target.model_id),
                provider: target.provider_id.clone(),
                model_id: target.model_id.clone(),
            }
            .into());
        };
        let limit = ModelLimit {
            context,
            input: overrides.input.or(configured.input),
            output: overrides.output.or(configured.output).unwrap_or(0),
        };
        Ok(PlanParams { limit, compaction: config.compaction(), target })
    }

    /// The model of the session's last user message.
    pub fn session_model(&self, session: Session) -> Option<TargetModel> {
        session.messages(&self.db).iter().rev().find_map(|m| {
            let info = m.info(&self.db);
            let model = info.model.as_ref().filter(|_| info.role == Role::User)?;
            Some(TargetModel { provider_id: model.provider_id.clone(), model_id: model.model_id.clone() })
        })
    }

    /// docs/opencode/compaction.md: what opencode does about compaction at the session's next step.
    pub fn compaction_plan(&self, session: Session, params: PlanParams) -> &CompactionPlan {
        compaction_plan(&self.db, session, params)
    }

    /// K10: the `messages` of the next normal call after the system message, in the
    /// chat-completions shape.
    pub fn next_messages(&self, session: Session) -> Result<Vec<Value>, EngineError> {
        let target = self.session_model(session).ok_or(SessionFailure::NoModel)?;
        Ok(next_call_messages(&self.db, session, target).clone())
    }

    /// `explain --session`: every read's rules (N2–N7) and every message's fate at the next
    /// compaction (K4–K11). With `message`, the session as it stood when that message was
    /// written: the messages up to it, and its reads only. With `file`, also a read of it at
    /// that point's next step.
    pub fn explain_session(
        &mut self,
        ws: Workspace,
        session: Session,
        overrides: LimitOverrides,
        message: Option<&str>,
        file: Option<&Path>,
    ) -> Result<SessionExplanation, EngineError> {
        let session = match message {
            None => session,
            Some(id) => {
                let messages = session.messages(&self.db);
                let at = messages
                    .iter()
                    .position(|m| m.id(&self.db) == id)
                    .ok_or_else(|| SessionFailure::Query(SessionError::NoMessage(id.to_owned())))?;
                // The same message inputs (their memos are shared with the whole session's),
                // except markers still pending at that point: opencode writes a marker's
                // `tail_start_id` only once its summary is done (K7.3), so it had none yet.
                let prefix: Vec<Message> = messages[..=at].to_vec();
                let answered: HashSet<&str> = prefix
                    .iter()
                    .filter(|m| m.info(&self.db).is_completed_summary())
                    .filter_map(|m| m.info(&self.db).parent_id.as_deref())
                    .collect();
                let pending: Vec<usize> = (0..prefix.len())
                    .filter(|&i| {
                        prefix[i].compaction_part(&self.db).is_some_and(|p| p.tail_start_id.is_some())
                            && !answered.contains(prefix[i].id(&self.db))
                    })
                    .collect();
                let mut prefix = prefix;
                for i in pending {
                    let mut parts = prefix[i].parts(&self.db).clone();
                    for part in parts.iter_mut().filter(|p| p.kind() == PartKind::Compaction) {
                        part.tail_start_id = None;
                    }
                    let info = prefix[i].info(&self.db).clone();
                    prefix[i] = self.new_message(ExportMessage { info, parts });
                }
                Session::builder(session.info(&self.db).clone(), prefix)
                    .durability(Durability::LOW)
                    .new(&self.db)
            }
        };
        if let Some(file) = file {
            // The same refusal `nearby --session` gives for a missing file.
            self.nearby_in_session(ws, session, file, &ReadPoint::NextStep)?;
        }
        let params = self.plan_params(ws, session, overrides)?;
        explain_session(&self.db, ws, session, &params, message, file)
            .map_err(|e| SessionFailure::Query(e).into())
    }

    /// N2–N6: the rules a read of `file` attaches at `point` in the session.
    pub fn nearby_in_session(
        &self,
        ws: Workspace,
        session: Session,
        file: &Path,
        point: &ReadPoint,
    ) -> Result<SessionNearby, EngineError> {
        let target = ctxgraph_db::path::resolve(ws.cwd(&self.db), file);
        let kind = self.db.files().get(&self.db, &target).kind(&self.db);
        match kind {
            FileKind::Missing | FileKind::Inaccessible => {
                return Err(EngineError::ReadTarget { path: target, reason: "no such file".to_owned() });
            }
            FileKind::Directory => {
                return Ok(SessionNearby {
                    kind: ReadKind::Directory,
                    rules: Vec::new(),
                    loaded: Vec::new(),
                    reminder: None,
                });
            }
            FileKind::File | FileKind::Other => {}
        }
        nearby_in_session(&self.db, ws, session, &target, point).map_err(|e| SessionFailure::Query(e).into())
    }

    /// What a read of `file` attaches, for any agent, as every surface answers it: the
    /// shared [`ReadLayout`], and for opencode its read tool's facts (the file's kind, each
    /// rule file's state, `metadata.loaded`), fresh or at `session`'s `point`. Sessions are
    /// opencode's: another agent with a session is refused.
    pub fn read(
        &self,
        ws: Workspace,
        agent: Agent,
        file: &Path,
        request: &Request,
        session: Option<(Session, &ReadPoint)>,
    ) -> Result<ReadAnswer, EngineError> {
        if agent != Agent::Opencode {
            if session.is_some() {
                return Err(EngineError::Unsupported(format!(
                    "sessions are opencode's; {agent}'s are not modelled"
                )));
            }
            return Ok(ReadAnswer { layout: self.agent_read(ws, agent, file, request)?, opencode: None });
        }
        let nearby = self.nearby(ws, file)?;
        let read = match session {
            Some((session, point)) => self.nearby_in_session(ws, session, file, point)?,
            None => SessionNearby::fresh(&nearby),
        };
        let target = ctxgraph_db::path::resolve(ws.cwd(&self.db), file);
        let layout = ctxgraph_opencode::profile::read_layout(&target, &nearby, &read);
        Ok(ReadAnswer { layout, opencode: Some(read) })
    }
}

/// What a read attaches ([`Engine::read`]): the shape every agent answers, and opencode's
/// extension.
#[derive(Clone, Debug)]
pub struct ReadAnswer {
    /// What the agent attaches, in the shape every agent shares.
    pub layout: ReadLayout,
    /// opencode's read tool: the file's kind, every rule file's state, `metadata.loaded`.
    pub opencode: Option<SessionNearby>,
}
