//! opencode's V1 history converter (`toModelMessages`) followed by the AI SDK's
//! `convertToModelMessages`: one stored message → the `ModelMessage`s a provider is given.
//!
//! K1 sizes a turn as the JSON of these messages, so the shapes here are exact, down to
//! which optional keys are present; key order does not change a length, but is kept as the
//! AI SDK writes it.

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::{Map, Value};

use super::Message;
use super::export::{Attachment, MessageInfo, Part, PartKind, Role, ToolInput, ToolStatus};
use ctxgraph_db::Db;

/// The model the history is converted for (`providerID`, `modelID`). Provider metadata of
/// messages produced by another model is not sent back (opencode's `differentModel`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TargetModel {
    /// `providerID`.
    pub provider_id: String,
    /// `modelID`.
    pub model_id: String,
}

pub use interned::Target;

// salsa's interned macro generates public functions that carry no docs and cannot be given
// any (as for the session inputs).
#[allow(missing_docs)]
mod interned {
    use super::TargetModel;

    /// A [`TargetModel`] as a query key. The per-message queries are keyed by a message and
    /// a target; interned, the target is an id there, where a `TargetModel` was two strings
    /// cloned, hashed and compared for every message of the session.
    #[salsa::interned(revisions = usize::MAX, debug)]
    pub struct Target<'db> {
        #[returns(ref)]
        pub model: TargetModel,
    }
}

/// The text a compaction marker stands for in model history (K6).
pub const COMPACTION_PROMPT: &str = "What did we do so far?";
/// A `subtask` part in model history (K6).
pub const SUBTASK_PROMPT: &str = "The following tool was executed by the user";
/// A pruned tool output (K11).
pub const CLEARED_OUTPUT: &str = "[Old tool result content cleared]";
/// A tool call left pending or running (K10).
pub const INTERRUPTED: &str = "[Tool execution was interrupted]";
/// The user message that carries media a tool returned, for providers that cannot take
/// media in a tool result.
pub const MEDIA_FROM_TOOL: &str = "Attached media from tool result:";

/// The `ModelMessage`s for one stored message (none for an assistant message that failed,
/// or one with nothing to send), as the JSON a provider adapter starts from.
#[salsa::tracked(returns(ref))]
pub fn model_messages<'db>(db: &'db dyn Db, message: Message, target: Target<'db>) -> Vec<Value> {
    convert(db, message, target.model(db))
        .iter()
        .map(|m| serde_json::to_value(m).unwrap_or_else(|e| unreachable!("string keys only: {e}")))
        .collect()
}

/// `{units, count}` of the messages' JSON: a list of them serialises as `[` + the items
/// joined by `,` + `]`, so a turn's length is a sum of these.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JsonLen {
    /// UTF-16 units of the messages' JSON, separators excluded.
    pub units: usize,
    /// How many messages.
    pub count: usize,
}

impl JsonLen {
    /// Both lengths together (the messages of two runs, concatenated).
    #[must_use]
    pub fn plus(self, other: JsonLen) -> JsonLen {
        JsonLen { units: self.units + other.units, count: self.count + other.count }
    }

    /// UTF-16 length of `JSON.stringify` of the whole list.
    pub fn list_units(self) -> usize {
        2 + self.units + self.count.saturating_sub(1)
    }
}

/// The [`JsonLen`] of one stored message's model messages: K1 sizes a turn by summing these.
///
/// The messages are converted here, borrowing the stored parts, and written straight into
/// a counter, not read from the [`model_messages`] memo: planning a compaction sizes every
/// message of the session but sends none of them. Holding every message's JSON tree made
/// the plan's working set grow with the session past the caches, and building one tree
/// for a message of 8 000 tool calls (then freeing it) was most of what sizing it cost. A
/// host that also sends the history converts those messages a second time, once.
#[salsa::tracked(returns(copy))]
pub fn model_json_len<'db>(db: &'db dyn Db, message: Message, target: Target<'db>) -> JsonLen {
    let messages = convert(db, message, target.model(db));
    let mut units = Utf16Units(0);
    for m in &messages {
        let _ = serde_json::to_writer(&mut units, m);
    }
    JsonLen { units: units.0, count: messages.len() }
}

/// Counts the UTF-16 units ([`js_len`](super::js_len)) of the UTF-8 text written to it: one per character,
/// two for a character past U+FFFF (four bytes in UTF-8). A character is counted by its
/// first byte, so text split anywhere counts the same.
struct Utf16Units(usize);

impl std::io::Write for Utf16Units {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0 +=
            bytes.iter().map(|&b| usize::from(b & 0xC0 != 0x80) + usize::from(b >= 0xF0)).sum::<usize>();
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// One `ModelMessage`, borrowing the stored message it comes from. Its serde shape is the
/// AI SDK's, key order included (K1 sizes a turn by this JSON; the order does not change
/// a length, but the history a host sends is compared byte for byte).
#[derive(Debug, Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
enum ModelMessage<'a> {
    User { content: Vec<ContentPart<'a>> },
    Assistant { content: Vec<ContentPart<'a>> },
    Tool { content: Vec<ContentPart<'a>> },
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case", rename_all_fields = "camelCase")]
enum ContentPart<'a> {
    Text {
        text: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        provider_options: Option<ProviderOptions<'a>>,
    },
    Reasoning {
        text: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        provider_options: Option<ProviderOptions<'a>>,
    },
    File {
        media_type: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        filename: Option<&'a str>,
        data: &'a str,
    },
    ToolCall {
        tool_call_id: &'a str,
        tool_name: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        input: Option<&'a ToolInput>,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        provider_executed: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        provider_options: Option<ProviderOptions<'a>>,
    },
    ToolResult {
        tool_call_id: &'a str,
        tool_name: &'a str,
        output: ToolOutput<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        provider_options: Option<ProviderOptions<'a>>,
    },
}

/// A part's `providerOptions`: the stored part's metadata, as is for text and reasoning,
/// and without the `providerExecuted` flag (which the call carries itself) for a tool.
#[derive(Clone, Copy, Debug)]
enum ProviderOptions<'a> {
    Metadata(&'a Value),
    ToolMetadata(&'a Map<String, Value>),
}

impl Serialize for ProviderOptions<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ProviderOptions::Metadata(value) => value.serialize(serializer),
            ProviderOptions::ToolMetadata(metadata) => {
                let mut map = serializer.serialize_map(None)?;
                for (key, value) in tool_options(metadata) {
                    map.serialize_entry(key, value)?;
                }
                map.end()
            }
        }
    }
}

fn tool_options(metadata: &Map<String, Value>) -> impl Iterator<Item = (&String, &Value)> {
    metadata.iter().filter(|(key, _)| *key != "providerExecuted")
}

/// The tool's `toModelOutput`: a string is text; output with attachments is content whose
/// `data:` attachments become media.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
enum ToolOutput<'a> {
    Text { value: &'a str },
    ErrorText { value: &'a str },
    Content { value: Vec<OutputPart<'a>> },
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "lowercase", rename_all_fields = "camelCase")]
enum OutputPart<'a> {
    Text { text: &'a str },
    Media { media_type: &'a str, data: &'a str },
}

/// One stored message → its `ModelMessage`s.
fn convert<'db>(db: &'db dyn Db, message: Message, target: &TargetModel) -> Vec<ModelMessage<'db>> {
    let info = message.info(db);
    let parts = message.parts(db);
    match info.role {
        Role::User => {
            let mut content = Vec::new();
            for part in parts {
                match part.kind() {
                    PartKind::Text if part.ignored != Some(true) && !part.text().is_empty() => {
                        content.push(ContentPart::Text { text: part.text(), provider_options: None });
                    }
                    PartKind::File => {
                        let mime = part.mime.as_deref().unwrap_or("");
                        if mime != "text/plain" && mime != "application/x-directory" {
                            content.push(ContentPart::File {
                                media_type: mime,
                                filename: part.filename.as_deref(),
                                data: part.url.as_deref().unwrap_or(""),
                            });
                        }
                    }
                    PartKind::Compaction => {
                        content.push(ContentPart::Text { text: COMPACTION_PROMPT, provider_options: None });
                    }
                    PartKind::Subtask => {
                        content.push(ContentPart::Text { text: SUBTASK_PROMPT, provider_options: None });
                    }
                    _ => {}
                }
            }
            if content.is_empty() { Vec::new() } else { vec![ModelMessage::User { content }] }
        }
        Role::Assistant => assistant(info, parts, target),
    }
}

fn is_media(mime: &str) -> bool {
    mime.starts_with("image/") || mime == "application/pdf"
}

/// One tool call as the UI message holds it before the AI SDK splits it into a call and
/// a result.
struct ToolCall<'a> {
    id: &'a str,
    name: &'a str,
    input: Option<&'a ToolInput>,
    provider_executed: bool,
    provider_options: Option<ProviderOptions<'a>>,
    result: ToolResult<'a>,
}

enum ToolResult<'a> {
    Text(&'a str),
    /// Output text with the non-media attachments the provider takes inline.
    Content(&'a str, Vec<&'a Attachment>),
    Error(&'a str),
}

impl<'a> ToolResult<'a> {
    fn model_output(&self) -> ToolOutput<'a> {
        match self {
            ToolResult::Text(value) => ToolOutput::Text { value },
            ToolResult::Error(value) => ToolOutput::ErrorText { value },
            ToolResult::Content(text, attachments) => {
                let mut value = Vec::with_capacity(attachments.len() + 1);
                if !text.is_empty() {
                    value.push(OutputPart::Text { text });
                }
                for attachment in attachments {
                    let url = attachment.url.as_str();
                    if let Some(comma) = url.strip_prefix("data:").and_then(|_| url.find(',')) {
                        value.push(OutputPart::Media {
                            media_type: &attachment.mime,
                            data: &url[comma + 1..],
                        });
                    }
                }
                ToolOutput::Content { value }
            }
        }
    }
}

enum UiPart<'a> {
    Text(&'a str, Option<&'a Value>),
    Reasoning(&'a str, Option<&'a Value>),
    Tool(ToolCall<'a>),
    StepStart,
}

fn assistant<'a>(info: &'a MessageInfo, parts: &'a [Part], target: &TargetModel) -> Vec<ModelMessage<'a>> {
    // An errored message is skipped unless it was aborted after producing something.
    if info.error.is_some()
        && !(info.is_aborted()
            && parts.iter().any(|p| !matches!(p.kind(), PartKind::StepStart | PartKind::Reasoning)))
    {
        return Vec::new();
    }
    let same_model = info.provider_id.as_deref() == Some(target.provider_id.as_str())
        && info.model_id.as_deref() == Some(target.model_id.as_str());
    let signed = parts.iter().any(|p| {
        p.kind() == PartKind::Reasoning
            && p.metadata
                .as_ref()
                .and_then(|m| m.pointer("/anthropic/signature"))
                .is_some_and(|s| !s.is_null())
    });
    // Sized up front: a message of thousands of parts grew these lists through a dozen
    // copies, each freeing a block large enough to make the allocator sweep its free lists.
    let mut ui = Vec::with_capacity(parts.len());
    let mut media: Vec<&Attachment> = Vec::new();
    for part in parts {
        match part.kind() {
            PartKind::Text => {
                let text = if part.text().is_empty() && signed { " " } else { part.text() };
                ui.push(UiPart::Text(text, part.metadata.as_ref().filter(|_| same_model)));
            }
            PartKind::StepStart => ui.push(UiPart::StepStart),
            PartKind::Reasoning => {
                if same_model {
                    ui.push(UiPart::Reasoning(part.text(), part.metadata.as_ref()));
                } else if !part.text().trim().is_empty() {
                    ui.push(UiPart::Text(part.text(), None));
                }
            }
            PartKind::Tool => {
                let Some(state) = &part.state else { continue };
                let result = match state.status {
                    ToolStatus::Completed => {
                        let output = if state.is_compacted() { CLEARED_OUTPUT } else { state.output() };
                        let attachments = if state.is_compacted() {
                            &[][..]
                        } else {
                            state.attachments.as_deref().unwrap_or(&[])
                        };
                        // No openai-compatible provider takes media in a tool result: it
                        // moves to a user message after this one.
                        media.extend(attachments.iter().filter(|a| is_media(&a.mime)));
                        let inline: Vec<&Attachment> =
                            attachments.iter().filter(|a| !is_media(&a.mime)).collect();
                        if inline.is_empty() {
                            ToolResult::Text(output)
                        } else {
                            ToolResult::Content(output, inline)
                        }
                    }
                    ToolStatus::Error => match state.interrupted_output() {
                        Some(output) => ToolResult::Text(output),
                        None => ToolResult::Error(state.error.as_deref().unwrap_or_default()),
                    },
                    ToolStatus::Pending | ToolStatus::Running => ToolResult::Error(INTERRUPTED),
                };
                let metadata = part.metadata.as_ref().and_then(Value::as_object);
                let provider_executed =
                    metadata.and_then(|m| m.get("providerExecuted")).is_some_and(|v| v == &Value::Bool(true));
                let provider_options = metadata
                    .filter(|m| same_model && tool_options(m).next().is_some())
                    .map(ProviderOptions::ToolMetadata);
                ui.push(UiPart::Tool(ToolCall {
                    id: part.call_id.as_deref().unwrap_or_default(),
                    name: part.tool.as_deref().unwrap_or_default(),
                    input: state.input.as_ref(),
                    provider_executed,
                    provider_options,
                    result,
                }));
            }
            _ => {}
        }
    }
    if !ui.iter().any(|p| !matches!(p, UiPart::StepStart)) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for block in ui.split(|p| matches!(p, UiPart::StepStart)).filter(|b| !b.is_empty()) {
        let calls = block.iter().filter(|p| matches!(p, UiPart::Tool(_))).count();
        let mut content = Vec::with_capacity(block.len() + calls);
        let mut results = Vec::with_capacity(calls);
        for part in block {
            match part {
                UiPart::Text(text, options) => content.push(ContentPart::Text {
                    text,
                    provider_options: options.map(ProviderOptions::Metadata),
                }),
                UiPart::Reasoning(text, options) => content.push(ContentPart::Reasoning {
                    text,
                    provider_options: options.map(ProviderOptions::Metadata),
                }),
                UiPart::Tool(call) => {
                    content.push(ContentPart::ToolCall {
                        tool_call_id: call.id,
                        tool_name: call.name,
                        input: call.input,
                        provider_executed: call.provider_executed,
                        provider_options: call.provider_options,
                    });
                    let result = ContentPart::ToolResult {
                        tool_call_id: call.id,
                        tool_name: call.name,
                        output: call.result.model_output(),
                        provider_options: call.provider_options,
                    };
                    if call.provider_executed {
                        content.push(result);
                    } else {
                        results.push(result);
                    }
                }
                UiPart::StepStart => {}
            }
        }
        out.push(ModelMessage::Assistant { content });
        if !results.is_empty() {
            out.push(ModelMessage::Tool { content: results });
        }
    }
    if !media.is_empty() {
        let mut content = Vec::with_capacity(media.len() + 1);
        content.push(ContentPart::Text { text: MEDIA_FROM_TOOL, provider_options: None });
        content.extend(media.iter().map(|a| ContentPart::File {
            media_type: &a.mime,
            filename: a.filename.as_deref(),
            data: &a.url,
        }));
        out.push(ModelMessage::User { content });
    }
    out
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use serde_json::json;

    use super::*;

    /// The count written as it goes is `js_len` of the whole text, however the writes cut
    /// it (here inside two-, three- and four-byte characters).
    #[test]
    fn utf16_units_are_counted_as_written() {
        let text = "a é € 😀 \"x\"\n";
        let bytes = text.as_bytes();
        for cut in 0..=bytes.len() {
            let mut units = Utf16Units(0);
            units.write_all(&bytes[..cut]).expect("count");
            units.write_all(&bytes[cut..]).expect("count");
            assert_eq!(units.0, super::super::js_len(text), "cut at {cut}");
        }
        let value = json!({"role": "user", "content": [{"type": "text", "text": text}]});
        let mut units = Utf16Units(0);
        serde_json::to_writer(&mut units, &value).expect("count");
        assert_eq!(units.0, super::super::js_len(&serde_json::to_string(&value).expect("json")));
    }
}
