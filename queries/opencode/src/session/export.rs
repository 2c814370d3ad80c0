//! The shapes of `opencode export <id>`: the session's info and its messages with their
//! parts, read as opencode writes them.
//!
//! Only the fields a session stage reads are typed; the rest of each object is skipped, so
//! a newer opencode adding fields still loads. A part of a type this module does not know
//! is kept (as [`PartKind::Other`], with its `id`) and ignored by every stage, as
//! opencode's own converters do.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A whole export file.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Export {
    /// The session's own info.
    pub info: SessionInfo,
    /// The messages, oldest first.
    pub messages: Vec<ExportMessage>,
}

/// The `info` object of an export: the session's id and directory.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
pub struct SessionInfo {
    /// `ses_…`.
    pub id: String,
    /// The directory opencode ran in.
    #[serde(default)]
    pub directory: Option<String>,
}

/// One message with its parts, as the export nests them.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct ExportMessage {
    /// The message's `info` object.
    pub info: MessageInfo,
    /// Its parts, in order.
    pub parts: Vec<Part>,
}

/// Who wrote a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user (prompts, attached files, compaction markers).
    User,
    /// The model (steps, tool calls, summaries).
    Assistant,
}

/// A message's `info`: the fields the session stages read.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
pub struct MessageInfo {
    /// `msg_…`, ordered by creation.
    pub id: String,
    /// Who wrote it.
    pub role: Role,
    /// An assistant message's user message; a summary's marker (K7.2, K10).
    #[serde(rename = "parentID", default)]
    pub parent_id: Option<String>,
    /// `true` on a compaction's summary (assistant); an object of diffs on user messages.
    #[serde(default)]
    pub summary: Option<Value>,
    /// Why an assistant message ended (`stop`, `tool-calls`, …); unset while it runs.
    #[serde(default)]
    pub finish: Option<String>,
    /// An assistant message's error, as opencode stored it.
    #[serde(default)]
    pub error: Option<Value>,
    /// An assistant message's token usage (K4).
    #[serde(default)]
    pub tokens: Option<Tokens>,
    /// The user message's model.
    #[serde(default)]
    pub model: Option<ModelId>,
    /// The assistant message's model.
    #[serde(rename = "providerID", default)]
    pub provider_id: Option<String>,
    /// The model an assistant message came from (with `provider_id`).
    #[serde(rename = "modelID", default)]
    pub model_id: Option<String>,
    /// The agent that wrote it (`build`, `compaction`, …).
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

/// A model as a user message names it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Deserialize, Serialize)]
pub struct ModelId {
    /// `providerID`.
    #[serde(rename = "providerID")]
    pub provider_id: String,
    /// `modelID`.
    #[serde(rename = "modelID")]
    pub model_id: String,
}

/// An assistant message's token usage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
pub struct Tokens {
    /// What the provider reported as the total, if it did.
    #[serde(default)]
    pub total: Option<u64>,
    /// Input tokens.
    #[serde(default)]
    pub input: u64,
    /// Output tokens.
    #[serde(default)]
    pub output: u64,
    /// Cached tokens read and written.
    #[serde(default)]
    pub cache: CacheTokens,
}

/// Cached tokens.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
pub struct CacheTokens {
    /// Read from the cache.
    #[serde(default)]
    pub read: u64,
    /// Written to the cache.
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
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Part {
    /// `type`, told apart once as the export is read (see [`PartKind`]).
    #[serde(rename = "type")]
    pub kind: PartKind,
    /// `prt_…`, ordered by creation.
    #[serde(default)]
    pub id: String,
    /// `text`, `reasoning`.
    #[serde(default)]
    pub text: Option<String>,
    /// `text`: written by opencode, not typed by the user.
    #[serde(default)]
    pub synthetic: Option<bool>,
    /// `text`: kept in the session but not sent to the model.
    #[serde(default)]
    pub ignored: Option<bool>,
    /// `text`, `reasoning`, `tool`: provider metadata.
    #[serde(default)]
    pub metadata: Option<Value>,
    /// `tool`.
    #[serde(default)]
    pub tool: Option<String>,
    /// `tool`: the model's id for the call.
    #[serde(rename = "callID", default)]
    pub call_id: Option<String>,
    /// `tool`: the call's state (boxed: it is most of a part's size, and most parts are not
    /// tool calls).
    #[serde(default)]
    pub state: Option<Box<ToolState>>,
    /// `file`.
    #[serde(default)]
    pub mime: Option<String>,
    /// `file`: the attachment's file name.
    #[serde(default)]
    pub filename: Option<String>,
    /// `file`: the attachment's URL (`data:` or `file:`).
    #[serde(default)]
    pub url: Option<String>,
    /// `compaction`.
    #[serde(default)]
    pub auto: Option<bool>,
    /// `compaction`: the marker was made for a provider overflow error (K5).
    #[serde(default)]
    pub overflow: Option<bool>,
    /// `compaction`: the first message kept verbatim, written once the summary is done (K7).
    #[serde(default)]
    pub tail_start_id: Option<String>,
}

/// The part types the stages tell apart. A part is matched on its type many times per
/// stage (every walk over a message's parts filters by it), so the name is read into this
/// once, as the export is parsed, instead of being kept as a string and compared on each
/// look: a session of 8 000 parts held 8 000 small strings for it, each a cache miss away.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PartKind {
    /// Text.
    Text,
    /// Model reasoning.
    Reasoning,
    /// A tool call with its state.
    Tool,
    /// An attached file.
    File,
    /// A compaction marker (K6).
    Compaction,
    /// A subtask the user ran (K6).
    Subtask,
    /// The start of a step: assistant messages split into model messages here.
    StepStart,
    /// `step-finish`, `patch`, `snapshot`, `agent`, `retry` and any type added later.
    #[serde(other)]
    Other,
}

impl Part {
    /// The part's type.
    pub fn kind(&self) -> PartKind {
        self.kind
    }

    /// The text of a `text` or `reasoning` part (empty otherwise).
    pub fn text(&self) -> &str {
        self.text.as_deref().unwrap_or("")
    }

    /// A tool part whose call completed, with its state.
    pub fn completed_tool(&self) -> Option<&ToolState> {
        self.state
            .as_deref()
            .filter(|state| self.kind() == PartKind::Tool && state.status == ToolStatus::Completed)
    }
}

/// Where a tool call stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum ToolStatus {
    /// Not started.
    Pending,
    /// Running.
    Running,
    /// Finished with an output.
    Completed,
    /// Failed (with an error).
    Error,
}

/// A tool part's `state`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct ToolState {
    /// Where the call stands.
    pub status: ToolStatus,
    /// The call's arguments.
    #[serde(default)]
    pub input: Option<ToolInput>,
    /// A completed call's output.
    #[serde(default)]
    pub output: Option<String>,
    /// A failed call's error.
    #[serde(default)]
    pub error: Option<String>,
    /// What the stages read of the tool's metadata (empty when there is none).
    #[serde(default)]
    pub metadata: ToolMetadata,
    /// Files the tool returned.
    #[serde(default)]
    pub attachments: Option<Vec<Attachment>>,
    /// Timestamps; only `compacted` matters (K11).
    #[serde(default)]
    pub time: Option<ToolTime>,
}

impl ToolState {
    /// K11: the output was pruned (`time.compacted` is set).
    pub fn is_compacted(&self) -> bool {
        self.time.as_ref().and_then(|t| t.compacted.as_ref()).is_some_and(|v| !v.is_null())
    }

    /// A completed call's output (empty otherwise).
    pub fn output(&self) -> &str {
        self.output.as_deref().unwrap_or("")
    }

    /// N2: the rule files this read attached (`metadata.loaded`).
    pub fn loaded(&self) -> impl Iterator<Item = &str> {
        self.metadata.loaded.iter().map(String::as_str)
    }

    /// An interrupted call's partial output (`metadata.interrupted` with `metadata.output`).
    pub fn interrupted_output(&self) -> Option<&str> {
        self.metadata.output.as_deref().filter(|_| self.metadata.interrupted)
    }
}

/// A tool call's arguments, kept as their compact JSON text: the stages send them (the
/// model's tool call) and show them (the summarizer's transcript) as that text, and read
/// one string of a read's (`filePath`, through [`ToolInput::fields`]). A tree per call, a
/// map of one or two entries with a string for each key and value, was most of the memory
/// a session of thousands of calls held, each string a cache miss away when the call was
/// sized or shown.
#[derive(Clone, Debug)]
pub struct ToolInput(Box<str>);

impl ToolInput {
    /// The arguments as `JSON.stringify` writes them (no spaces, keys in their order).
    pub fn json(&self) -> &str {
        &self.0
    }

    /// The arguments read as `T` (borrowing from the text where `T` does), or `None` where
    /// they are not of that shape.
    pub fn fields<'a, T: Deserialize<'a>>(&'a self) -> Option<T> {
        serde_json::from_str(self.json()).ok()
    }
}

impl PartialEq for ToolInput {
    fn eq(&self, other: &Self) -> bool {
        self.json() == other.json()
    }
}

impl Eq for ToolInput {}

impl<'de> Deserialize<'de> for ToolInput {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Read as a value and written again: the export is indented, what is sent is not,
        // and a repeated key keeps its first place with its last value, as in JavaScript.
        let value = Value::deserialize(deserializer)?;
        let json = serde_json::to_string(&value).map_err(serde::de::Error::custom)?;
        Ok(ToolInput(json.into_boxed_str()))
    }
}

impl Serialize for ToolInput {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // Passed from the text to the serializer value by value, without building a tree;
        // what comes out is what serialising the value it was read from gives (a test
        // below checks every kind of value). `serde_json`'s `RawValue` would copy the text
        // as it is, but its feature adds a branch to every serialiser and deserialiser the
        // workspace instantiates: 155 KB of the release binary, which is at its size limit.
        let mut json = serde_json::Deserializer::from_str(&self.0);
        serde_transcode::transcode(&mut json, serializer)
    }
}

/// What the stages read of a tool state's `metadata`: tools write much more there (a read's
/// preview of the file, an edit's diff with both versions of it), and none of it is sent,
/// so the rest is dropped as the export is read. Values of another type than the stages
/// expect are dropped as well, as is a `metadata` that is not an object.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolMetadata {
    /// `loaded`, its strings (N2: the rule files a read attached).
    pub loaded: Vec<String>,
    /// `interrupted` is `true`.
    pub interrupted: bool,
    /// `output`, a string (the partial output of an interrupted call).
    pub output: Option<String>,
}

impl<'de> Deserialize<'de> for ToolMetadata {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Read whole, then only three of its keys taken: a derive would fail on a field of
        // another type (and on a `metadata` that is not an object). The tree lives only
        // while this runs; a visitor that skipped the rest unread cost more binary than it
        // saved time, and the binary is at its size limit (BENCHMARKS.md).
        let Value::Object(mut metadata) = Value::deserialize(deserializer)? else {
            return Ok(ToolMetadata::default());
        };
        let loaded = match metadata.swap_remove("loaded") {
            Some(Value::Array(items)) => items
                .into_iter()
                .filter_map(|v| if let Value::String(s) = v { Some(s) } else { None })
                .collect(),
            _ => Vec::new(),
        };
        let output = match metadata.swap_remove("output") {
            Some(Value::String(s)) => Some(s),
            _ => None,
        };
        Ok(ToolMetadata {
            loaded,
            interrupted: metadata.get("interrupted") == Some(&Value::Bool(true)),
            output,
        })
    }
}

/// A tool state's `time`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct ToolTime {
    /// When pruning cleared the output (K11).
    #[serde(default)]
    pub compacted: Option<Value>,
}

/// A file a tool returned.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Attachment {
    /// Its MIME type.
    pub mime: String,
    /// Its file name.
    #[serde(default)]
    pub filename: Option<String>,
    /// Its URL (`data:` inline).
    #[serde(default)]
    pub url: String,
}

/// Why an export could not be read: where (JSON path and position) and what.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{path}: line {line}, column {column} (byte {offset}): {message}")]
pub struct ExportError {
    /// JSON path of the offending value, e.g. `messages[3].parts[1].state.status`.
    pub path: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column (bytes, as `serde_json` counts).
    pub column: usize,
    /// Byte offset of the position serde reported.
    pub offset: usize,
    /// What `serde_json` said, without its own position.
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
    // Tracking the path copies every key it passes: 40% of the instructions of parsing a
    // large export, and much of the allocator's churn. Only a failed parse needs the path,
    // so it is tracked on a second pass over an export that failed (the same deserializer,
    // so the same error at the same place).
    if let Ok(value) = serde_json::from_slice(bytes) {
        return Ok(value);
    }
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

    #[test]
    fn part_types_are_told_apart_by_their_exported_names() {
        let names =
            ["text", "reasoning", "tool", "file", "compaction", "subtask", "step-start", "step-finish"];
        let parts: Vec<String> = names.iter().map(|n| format!(r#"{{"type":"{n}","id":"p"}}"#)).collect();
        let text = format!(
            r#"{{"info":{{"id":"s"}},"messages":[{{"info":{{"id":"m","role":"user"}},"parts":[{}]}}]}}"#,
            parts.join(",")
        );
        let export = parse_export(text.as_bytes()).unwrap();
        let kinds: Vec<PartKind> = export.messages[0].parts.iter().map(Part::kind).collect();
        let expected = [
            PartKind::Text,
            PartKind::Reasoning,
            PartKind::Tool,
            PartKind::File,
            PartKind::Compaction,
            PartKind::Subtask,
            PartKind::StepStart,
            PartKind::Other,
        ];
        assert_eq!(kinds, expected);
    }

    fn tool_state(state: &str) -> ToolState {
        let text = format!(
            r#"{{"info":{{"id":"s"}},"messages":[{{"info":{{"id":"m","role":"assistant"}},"parts":[{{"type":"tool","id":"p","tool":"read","state":{state}}}]}}]}}"#
        );
        let export = parse_export(text.as_bytes()).unwrap();
        *export.messages[0].parts[0].state.clone().unwrap()
    }

    #[test]
    fn a_tool_input_is_kept_as_compact_json_in_its_key_order() {
        let state = tool_state(
            "{\"status\": \"running\", \"input\": {\n  \"z\": [1, 2.5, \"a\\\"b\"],\n  \"a\": {\"k\": null},\n  \"z\": \"last\"\n}}",
        );
        let input = state.input.unwrap();
        // A repeated key keeps its first place and its last value, as `JSON.parse` gives it.
        assert_eq!(input.json(), r#"{"z":"last","a":{"k":null}}"#);
        // Written as it is, not as a string, inside whatever is serialised around it.
        assert_eq!(serde_json::to_string(&[&input]).unwrap(), r#"[{"z":"last","a":{"k":null}}]"#);
        assert_eq!(serde_json::to_value(&input).unwrap(), serde_json::json!({"z": "last", "a": {"k": null}}));
        let fields: Value = input.fields().unwrap();
        assert_eq!(fields["a"], serde_json::json!({"k": null}));
        assert_eq!(input.fields::<Vec<u8>>(), None, "an object is not a list");

        // Written from the text, every kind of value comes out as its tree writes it.
        let input = r#"{"f":[1.0,1e20,-0.0,2.5e-8,12345678901234567890,-9223372036854775808],"s":"é\u2028\"\\\n","n":null,"b":[true,false],"o":{}}"#;
        let state = tool_state(&format!(r#"{{"status":"running","input":{input}}}"#));
        let tree: Value = serde_json::from_str(input).unwrap();
        let written = state.input.unwrap();
        assert_eq!(serde_json::to_string(&written).unwrap(), serde_json::to_string(&tree).unwrap());
        assert_eq!(serde_json::to_value(&written).unwrap(), tree);
        assert_eq!(written.json(), serde_json::to_string(&tree).unwrap());
    }

    #[test]
    fn tool_metadata_keeps_what_the_stages_read_and_skips_the_rest() {
        let state = tool_state(
            r#"{"status":"error","metadata":{"preview":{"deep":[[[{}]]]},"loaded":["/a/AGENTS.md",3,null,"/b/AGENTS.md"],"interrupted":true,"output":"partial"}}"#,
        );
        assert_eq!(state.loaded().collect::<Vec<_>>(), ["/a/AGENTS.md", "/b/AGENTS.md"]);
        assert_eq!(state.interrupted_output(), Some("partial"));

        let state = tool_state(
            r#"{"status":"error","metadata":{"interrupted":"yes","output":"partial","loaded":"x"}}"#,
        );
        assert_eq!(state.interrupted_output(), None, "only `interrupted: true` counts");
        assert_eq!(state.loaded().count(), 0);

        let state = tool_state(r#"{"status":"error","metadata":{"interrupted":true,"output":7}}"#);
        assert_eq!(state.interrupted_output(), None);

        for not_an_object in
            ["\"text\"", "[1, [2], {\"loaded\": [\"x\"]}]", "12", "-1", "1.5", "true", "null"]
        {
            let state = tool_state(&format!(r#"{{"status":"completed","metadata":{not_an_object}}}"#));
            assert_eq!(state.loaded().count(), 0, "{not_an_object}");
            assert_eq!(state.interrupted_output(), None, "{not_an_object}");
        }
    }
}
