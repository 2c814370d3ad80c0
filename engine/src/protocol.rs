//! The messages of `ctxgraph serve`'s JSON-RPC protocol, as typed serde structs: what a
//! request's `params` may hold and what each method answers.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use ctxgraph_opencode::nearby::{Nearby, Skip};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use ctxgraph_opencode::prompt::PlacedBlock;

use crate::Turn;

/// `build {cwd, agent?, section?, model?, opencode_agent?, json_schema?, user_system?,
/// known_hash?}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BuildParams {
    pub cwd: PathBuf,
    #[serde(default)]
    pub section: Option<SectionParam>,
    #[serde(default)]
    pub model: Option<String>,
    /// With `section: "message"`: the opencode agent (default `build`). Not `agent`, which
    /// names the coding agent whose context is built (`--opencode-agent` on the CLI).
    #[serde(default)]
    pub opencode_agent: Option<String>,
    /// With `section: "message"`: the user asked for structured output (A1).
    #[serde(default)]
    pub json_schema: bool,
    /// With `section: "message"`: the user message's `system` text (A2).
    #[serde(default)]
    pub user_system: Option<String>,
    /// The `hash` of the text the client already has: the reply then leaves out what the
    /// client knows (see [`BuildReply`]).
    #[serde(default)]
    pub known_hash: Option<String>,
    /// Whose context to build, by its `--agent` name (default opencode); `section` and
    /// `model` are opencode's.
    #[serde(default)]
    pub agent: Option<String>,
}

/// The answer to `build` for an agent other than opencode: its text (Codex's message;
/// Gemini's system-instruction and first-message context) and one block per file sent, in
/// send order. With the current hash as `known_hash`: `unchanged`, no text and no blocks.
#[derive(Serialize)]
pub(crate) struct AgentBuildReply {
    pub agent: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// blake3 of the text.
    pub hash: String,
    pub bytes: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocks: Option<Vec<AgentBlock>>,
    /// Queries executed for this build.
    pub executed: u64,
    pub unchanged: bool,
    /// Claude Code without its installation: why its own wording is placeholders in `text`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
}

/// One block an agent sends: the profile's block (source, placement, position, range,
/// hash, rule, reason) and its bytes.
#[derive(Serialize)]
pub(crate) struct AgentBlock {
    #[serde(flatten)]
    pub block: ctxgraph_db::profile::Block,
    pub text: String,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "lowercase")]
pub(crate) enum SectionParam {
    System,
    Environment,
    Instructions,
    Message,
}

/// `nearby {file, cwd}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct NearbyParams {
    pub file: PathBuf,
    pub cwd: PathBuf,
    /// A session opened with `session/open`: the read happens in its state (N2–N7).
    #[serde(default)]
    pub session: Option<String>,
    /// The assistant message the read belongs to; default: the session's next step.
    #[serde(default)]
    pub message: Option<String>,
}

/// The answer to `build`. Without `known_hash` it carries the text and every block. With a
/// `known_hash` it carries only what the client lacks: no text and no blocks when that is
/// the current text (`unchanged: true`); the text and only the blocks added or modified
/// when it is the build the server sent last for this directory, section and model; and
/// everything for any other hash.
#[derive(Serialize)]
pub(crate) struct BuildReply<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<&'a str>,
    /// blake3 of the text.
    pub hash: &'a str,
    pub bytes: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocks: Option<Vec<&'a PlacedBlock>>,
    /// Ids of the blocks added, then modified, since the previous build.
    pub changed: Vec<Arc<str>>,
    pub removed: &'a [Arc<str>],
    pub stable_prefix_bytes: usize,
    /// Queries executed for this build.
    pub executed: u64,
    /// The text is the one the client named in `known_hash`; text and blocks are left out.
    pub unchanged: bool,
}

/// What the client already has, as far as `build` can tell.
#[derive(Clone, Copy)]
pub(crate) enum Known {
    /// No `known_hash`, or one from some other build: send everything.
    Nothing,
    /// The client holds the server's previous build of this text.
    PreviousBuild,
    /// The client holds exactly this text.
    Current,
}

impl<'a> BuildReply<'a> {
    pub fn new(turn: &'a Turn, known: Known, executed: u64) -> Self {
        let (layout, diff) = (&turn.layout, &turn.diff);
        let changed = diff.changed();
        let (unchanged, text, blocks) = match known {
            Known::Nothing => (false, Some(layout.text.as_str()), Some(layout.blocks.iter().collect())),
            Known::Current => (true, None, None),
            Known::PreviousBuild => {
                let blocks = layout.blocks.iter().filter(|b| changed.contains(&b.id)).collect();
                (false, Some(layout.text.as_str()), Some(blocks))
            }
        };
        BuildReply {
            text,
            hash: &layout.hash,
            bytes: layout.text.len(),
            blocks,
            changed,
            removed: &diff.removed,
            stable_prefix_bytes: diff.stable_prefix_bytes,
            executed,
            unchanged,
        }
    }
}

/// One rule file in a `nearby` answer.
#[derive(Serialize)]
pub(crate) struct NearbyRule<'a> {
    pub path: &'a std::path::Path,
    pub attached: bool,
    pub skipped: Option<&'static str>,
}

/// The answer to `nearby`.
#[derive(Serialize)]
pub(crate) struct NearbyReply<'a> {
    pub reminder: Option<String>,
    pub rules: Vec<NearbyRule<'a>>,
}

impl<'a> NearbyReply<'a> {
    pub fn new(nearby: &'a Nearby) -> Self {
        let rules = nearby
            .rules
            .iter()
            .map(|rule| NearbyRule {
                path: &rule.path,
                attached: rule.block.is_some(),
                skipped: rule.skipped.as_ref().map(|skip| match skip {
                    Skip::IsTarget => "is_target",
                    Skip::InSystemPrompt => "in_system_prompt",
                    Skip::Empty => "empty",
                }),
            })
            .collect();
        NearbyReply { reminder: nearby.reminder(), rules }
    }
}

/// `installation {texts}`: opencode's own texts, by asset name (docs/opencode/installation.md).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct InstallationParams {
    pub texts: Vec<String>,
}

/// The answer to `installation`: the executable and release the server loaded its texts
/// from (`null` without one), each text asked for that was found and verified (L2), and
/// why each other one is not (L3).
#[derive(Serialize)]
pub(crate) struct InstallationReply {
    pub binary: Option<PathBuf>,
    pub version: Option<String>,
    pub texts: BTreeMap<String, String>,
    pub unavailable: BTreeMap<String, String>,
}

/// The answer to `stats`.
#[derive(Serialize)]
pub(crate) struct StatsReply {
    pub executions: BTreeMap<String, u64>,
    pub total_executions: u64,
    pub inputs: usize,
    pub watching: bool,
    pub watched_dirs: usize,
}

/// A JSON-RPC error object.
#[derive(Serialize)]
pub(crate) struct ErrorObject {
    pub code: i64,
    pub message: String,
}

/// A JSON-RPC response: `{"jsonrpc":"2.0","id":…,"result":…}` or `…,"error":{…}}`.
pub(crate) struct Response {
    pub jsonrpc: &'static str,
    /// The request's id, echoed as sent (a string, a number or null).
    pub id: Value,
    pub outcome: Outcome,
}

pub(crate) enum Outcome {
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

/// A method's answer. It owns what the reply shows and lays the reply out only while
/// serialising, so no JSON tree or copy of the text is made on the way out.
pub(crate) enum Answer {
    Build {
        turn: Turn,
        known: Known,
        executed: u64,
    },
    Nearby(Nearby),
    /// `build` with `agent` other than opencode.
    AgentBuild(AgentBuildReply),
    Stats(StatsReply),
    Installation(InstallationReply),
    /// The session methods' answers (`serve_session.rs`), built as JSON values there.
    Json(Value),
    /// `null` (`shutdown`).
    Null,
}

impl Serialize for Answer {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Answer::Build { turn, known, executed } => {
                BuildReply::new(turn, *known, *executed).serialize(serializer)
            }
            Answer::Nearby(nearby) => NearbyReply::new(nearby).serialize(serializer),
            Answer::AgentBuild(reply) => reply.serialize(serializer),
            Answer::Stats(stats) => stats.serialize(serializer),
            Answer::Installation(reply) => reply.serialize(serializer),
            Answer::Json(value) => value.serialize(serializer),
            Answer::Null => serializer.serialize_unit(),
        }
    }
}
