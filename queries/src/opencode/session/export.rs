//! The shapes of `opencode export <id>`: the session's info and its messages with their
//! parts, read as opencode writes them.
//!
//! Only the fields a session stage reads are typed; the rest of each object is skipped, so
//! a newer opencode adding fields still loads. A part of a type this module does not know
//! is kept (its `type` and `id`) and ignored by every stage, as opencode's own converters do.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A whole export file.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Export {
    pub info: SessionInfo,
    pub messages: Vec<ExportMessage>,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
pub struct SessionInfo {
    pub id: String,
    #[serde(default)]
    pub directory: Option<String>,
}

/// One message with its parts, as the export nests them.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct ExportMessage {
    pub info: MessageInfo,
    pub parts: Vec<Part>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
pub struct MessageInfo {
    pub id: String,
    pub role: Role,
    #[serde(rename = "parentID", default)]
    pub parent_id: Option<String>,
    /// `true` on a compaction's summary (assistant); an object of diffs on user messages.
    #[serde(default)]
    pub summary: Option<Value>,
    #[serde(default)]
    pub finish: Option<String>,
    #[serde(default)]
    pub error: Option<Value>,
    #[serde(default)]
    pub tokens: Option<Tokens>,
    /// The user message's model.
    #[serde(default)]
    pub model: Option<ModelId>,
    /// The assistant message's model.
    #[serde(rename = "providerID", default)]
    pub provider_id: Option<String>,
    #[serde(rename = "modelID", default)]
    pub model_id: Option<String>,
    #[serde(default)]
    pub agent: Option<String>,
}

impl MessageInfo {
    /// An assistant message that is a compaction's summary.
    pub fn is_summary(&self) -> bool {
        self.role == Role::Assistant && self.summary == Some(Value::Bool(true))
    }

    /// A finished, error-free summary: what K7.2 and K10 count as a completed compaction.
    pub fn is_completed_summary(&self) -> bool {
        self.is_summary() && self.finish.is_some() && self.error.is_none()
    }

    /// `MessageAbortedError`: the only error after which opencode still sends the message.
    pub fn is_aborted(&self) -> bool {
        self.error.as_ref().and_then(|e| e.get("name")).and_then(Value::as_str) == Some("MessageAbortedError")
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, Deserialize, Serialize)]
pub struct ModelId {
    #[serde(rename = "providerID")]
    pub provider_id: String,
    #[serde(rename = "modelID")]
    pub model_id: String,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
pub struct Tokens {
    #[serde(default)]
    pub total: Option<u64>,
    #[serde(default)]
    pub input: u64,
    #[serde(default)]
    pub output: u64,
    #[serde(default)]
    pub cache: CacheTokens,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
pub struct CacheTokens {
    #[serde(default)]
    pub read: u64,
    #[serde(default)]
    pub write: u64,
}

impl Tokens {
    /// K4: `total`, or the sum of its parts when `total` is absent or zero.
    pub fn count(&self) -> u64 {
        match self.total {
            Some(total) if total > 0 => total,
            _ => self.input + self.output + self.cache.read + self.cache.write,
        }
    }
}

/// One part. The fields are the union of the part types the stages read; which are set
/// depends on `kind` (see [`PartKind`]).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
pub struct Part {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub id: String,
    /// `text`, `reasoning`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub synthetic: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignored: Option<bool>,
    /// `text`, `reasoning`, `tool`: provider metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    /// `tool`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    #[serde(rename = "callID", default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<ToolState>,
    /// `file`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// `compaction`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overflow: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tail_start_id: Option<String>,
}

/// The part types the stages tell apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartKind {
    Text,
    Reasoning,
    Tool,
    File,
    Compaction,
    Subtask,
    StepStart,
    /// `step-finish`, `patch`, `snapshot`, `agent`, `retry` and any type added later.
    Other,
}

impl Part {
    pub fn kind(&self) -> PartKind {
        match self.kind.as_str() {
            "text" => PartKind::Text,
            "reasoning" => PartKind::Reasoning,
            "tool" => PartKind::Tool,
            "file" => PartKind::File,
            "compaction" => PartKind::Compaction,
            "subtask" => PartKind::Subtask,
            "step-start" => PartKind::StepStart,
            _ => PartKind::Other,
        }
    }

    pub fn text(&self) -> &str {
        self.text.as_deref().unwrap_or("")
    }

    /// A tool part whose call completed, with its state.
    pub fn completed_tool(&self) -> Option<&ToolState> {
        self.state
            .as_ref()
            .filter(|state| self.kind() == PartKind::Tool && state.status == ToolStatus::Completed)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolStatus {
    Pending,
    Running,
    Completed,
    Error,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
pub struct ToolState {
    pub status: ToolStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attachments: Option<Vec<Attachment>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<ToolTime>,
}

impl ToolState {
    /// K11: the output was pruned (`time.compacted` is set).
    pub fn is_compacted(&self) -> bool {
        self.time.as_ref().and_then(|t| t.compacted.as_ref()).is_some_and(|v| !v.is_null())
    }

    pub fn output(&self) -> &str {
        self.output.as_deref().unwrap_or("")
    }

    /// N2: the rule files this read attached (`metadata.loaded`).
    pub fn loaded(&self) -> impl Iterator<Item = &str> {
        self.metadata
            .as_ref()
            .and_then(|m| m.get("loaded"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
    }

    /// An interrupted call's partial output (`metadata.interrupted` with `metadata.output`).
    pub fn interrupted_output(&self) -> Option<&str> {
        let metadata = self.metadata.as_ref()?;
        (metadata.get("interrupted") == Some(&Value::Bool(true)))
            .then(|| metadata.get("output").and_then(Value::as_str))
            .flatten()
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
pub struct ToolTime {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compacted: Option<Value>,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
pub struct Attachment {
    pub mime: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    #[serde(default)]
    pub url: String,
}

/// Why an export could not be read: where (JSON path and position) and what.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{path}: line {line}, column {column} (byte {offset}): {message}")]
pub struct ExportError {
    /// JSON path of the offending value, e.g. `messages[3].parts[1].state.status`.
    pub path: String,
    pub line: usize,
    pub column: usize,
    /// Byte offset of the position serde reported.
    pub offset: usize,
    pub message: String,
}

/// Parses an export (or one message, with [`parse_message`]).
pub fn parse_export(bytes: &[u8]) -> Result<Export, ExportError> {
    parse(bytes)
}

/// Parses one message as `{info, parts}` (what `serve`'s `session/append` receives).
pub fn parse_message(bytes: &[u8]) -> Result<ExportMessage, ExportError> {
    parse(bytes)
}

fn parse<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, ExportError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let result: Result<T, _> = serde_path_to_error::deserialize(&mut de);
    let value = result.map_err(|err| {
        let path = err.path().to_string();
        let inner = err.into_inner();
        let (line, column) = (inner.line(), inner.column());
        ExportError {
            path: if path == "." { "$".to_owned() } else { format!("$.{path}") },
            line,
            column,
            offset: byte_offset(bytes, line, column),
            message: strip_position(&inner.to_string()),
        }
    })?;
    de.end().map_err(|inner| ExportError {
        path: "$".to_owned(),
        line: inner.line(),
        column: inner.column(),
        offset: byte_offset(bytes, inner.line(), inner.column()),
        message: strip_position(&inner.to_string()),
    })?;
    Ok(value)
}

/// `serde_json` reports the 1-based line and the column of the last byte it consumed (1-based,
/// so it equals the 0-based index of the byte after it): the offset is just past the
/// offending token.
fn byte_offset(bytes: &[u8], line: usize, column: usize) -> usize {
    let line_start: usize =
        bytes.split_inclusive(|&b| b == b'\n').take(line.saturating_sub(1)).map(<[u8]>::len).sum();
    (line_start + column).min(bytes.len())
}

/// `serde_json` appends ` at line L column C`; the error carries those as fields.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(at) => message[..at].to_owned(),
        None => message.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wrong_type_names_its_path_and_offset() {
        let text = br#"{"info":{"id":"s"},"messages":[{"info":{"id":"m","role":"user"},"parts":[{"type":"tool","state":{"status":"done"}}]}]}"#;
        let err = parse_export(text).unwrap_err();
        assert_eq!(err.path, "$.messages[0].parts[0].state.status");
        assert_eq!(&text[err.offset - 6..err.offset], br#""done""#);
        assert_eq!(err.line, 1);
    }

    #[test]
    fn truncated_input_is_an_error_at_its_end() {
        let text = br#"{"info":{"id":"s"},"messages":[{"info""#;
        let err = parse_export(text).unwrap_err();
        assert_eq!(err.offset, text.len());
        assert!(err.message.contains("EOF"), "{}", err.message);
    }

    #[test]
    fn unknown_part_types_are_kept() {
        let text = br#"{"info":{"id":"s"},"messages":[{"info":{"id":"m","role":"user"},"parts":[{"type":"hologram","id":"p","colour":3}]}]}"#;
        let export = parse_export(text).unwrap();
        assert_eq!(export.messages[0].parts[0].kind(), PartKind::Other);
        assert_eq!(export.messages[0].parts[0].id, "p");
    }
}
