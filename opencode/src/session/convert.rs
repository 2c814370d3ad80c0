//! opencode's V1 history converter (`toModelMessages`) followed by the AI SDK's
//! `convertToModelMessages`: one stored message → the `ModelMessage`s a provider is given.
//!
//! K1 sizes a turn as the JSON of these messages, so the shapes here are exact, down to
//! which optional keys are present; key order does not change a length, but is kept as the
//! AI SDK writes it.

use serde_json::{Map, Value, json};

use super::Message;
use super::export::{PartKind, Role, ToolStatus};
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
/// or one with nothing to send).
#[salsa::tracked(returns(ref))]
pub fn model_messages(db: &dyn Db, message: Message, target: TargetModel) -> Vec<Value> {
    convert(db, message, &target)
}

/// [`model_messages`], made afresh.
fn convert(db: &dyn Db, message: Message, target: &TargetModel) -> Vec<Value> {
    let info = message.info(db);
    let parts = message.parts(db);
    match info.role {
        Role::User => {
            let mut content = Vec::new();
            for part in parts {
                match part.kind() {
                    PartKind::Text if part.ignored != Some(true) && !part.text().is_empty() => {
                        content.push(json!({"type": "text", "text": part.text()}));
                    }
                    PartKind::File => {
                        let mime = part.mime.as_deref().unwrap_or("");
                        if mime != "text/plain" && mime != "application/x-directory" {
                            content.push(file_part(
                                mime,
                                part.filename.as_deref(),
                                part.url.as_deref().unwrap_or(""),
                            ));
                        }
                    }
                    PartKind::Compaction => content.push(json!({"type": "text", "text": COMPACTION_PROMPT})),
                    PartKind::Subtask => content.push(json!({"type": "text", "text": SUBTASK_PROMPT})),
                    _ => {}
                }
            }
            if content.is_empty() { Vec::new() } else { vec![json!({"role": "user", "content": content})] }
        }
        Role::Assistant => assistant(info, parts, target),
    }
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
/// The messages are converted here and dropped once counted, not read from the
/// [`model_messages`] memo: planning a compaction sizes every message of the session but
/// sends none of them, and holding every message's JSON tree for that made the plan's
/// working set grow with the session past the caches (at 8 000 steps it no longer fit). A
/// host that also sends the history converts those messages a second time, once.
#[salsa::tracked(returns(copy))]
pub fn model_json_len(db: &dyn Db, message: Message, target: TargetModel) -> JsonLen {
    let messages = convert(db, message, &target);
    let mut units = Utf16Units(0);
    for m in &messages {
        // Counted as written, never held: one message of thousands of tool calls is
        // megabytes of JSON.
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

fn file_part(mime: &str, filename: Option<&str>, url: &str) -> Value {
    let mut part = Map::new();
    part.insert("type".into(), "file".into());
    part.insert("mediaType".into(), mime.into());
    if let Some(filename) = filename {
        part.insert("filename".into(), filename.into());
    }
    part.insert("data".into(), url.into());
    Value::Object(part)
}

fn is_media(mime: &str) -> bool {
    mime.starts_with("image/") || mime == "application/pdf"
}

/// One tool call as the UI message holds it before the AI SDK splits it into a call and
/// a result. It borrows from the stored part: the model messages are the only copy made
/// (a message of thousands of calls made every string twice, then dropped one).
struct ToolCall<'a> {
    id: &'a str,
    name: &'a str,
    input: Option<&'a Value>,
    provider_executed: bool,
    provider_options: Option<Value>,
    result: ToolResult<'a>,
}

enum ToolResult<'a> {
    Text(&'a str),
    /// Output text with the non-media attachments the provider takes inline.
    Content(&'a str, Vec<Value>),
    Error(&'a str),
}

enum UiPart<'a> {
    Text(&'a str, Option<&'a Value>),
    Reasoning(&'a str, Option<&'a Value>),
    Tool(ToolCall<'a>),
    StepStart,
}

fn assistant(
    info: &super::export::MessageInfo,
    parts: &[super::export::Part],
    target: &TargetModel,
) -> Vec<Value> {
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
    let mut media = Vec::new();
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
                        let output = if state.is_compacted() {
                            super::convert::CLEARED_OUTPUT
                        } else {
                            state.output()
                        };
                        let attachments = if state.is_compacted() {
                            &[][..]
                        } else {
                            state.attachments.as_deref().unwrap_or(&[])
                        };
                        // No openai-compatible provider takes media in a tool result: it
                        // moves to a user message after this one.
                        media.extend(attachments.iter().filter(|a| is_media(&a.mime)).cloned());
                        let inline: Vec<Value> = attachments
                            .iter()
                            .filter(|a| !is_media(&a.mime))
                            .map(|a| serde_json::to_value(a).unwrap_or(Value::Null))
                            .collect();
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
                    .map(|m| {
                        m.iter()
                            .filter(|(k, _)| *k != "providerExecuted")
                            .map(|(k, v)| (k.clone(), v.clone()))
                            .collect::<Map<_, _>>()
                    })
                    .filter(|m| !m.is_empty() && same_model)
                    .map(Value::Object);
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
        let mut content = Vec::with_capacity(block.len());
        let mut results = Vec::with_capacity(calls);
        for part in block {
            match part {
                UiPart::Text(text, options) => {
                    content.push(with_options(json!({"type": "text", "text": text}), *options));
                }
                UiPart::Reasoning(text, options) => {
                    content.push(with_options(json!({"type": "reasoning", "text": text}), *options));
                }
                UiPart::Tool(call) => {
                    let mut item = Map::new();
                    item.insert("type".into(), "tool-call".into());
                    item.insert("toolCallId".into(), call.id.into());
                    item.insert("toolName".into(), call.name.into());
                    if let Some(input) = call.input {
                        item.insert("input".into(), input.clone());
                    }
                    if call.provider_executed {
                        item.insert("providerExecuted".into(), true.into());
                    }
                    content.push(with_options(Value::Object(item), call.provider_options.as_ref()));
                    let result = with_options(
                        json!({"type": "tool-result", "toolCallId": call.id, "toolName": call.name, "output": model_output(&call.result)}),
                        call.provider_options.as_ref(),
                    );
                    if call.provider_executed {
                        content.push(result);
                    } else {
                        results.push(result);
                    }
                }
                UiPart::StepStart => {}
            }
        }
        out.push(json!({"role": "assistant", "content": content}));
        if !results.is_empty() {
            out.push(json!({"role": "tool", "content": results}));
        }
    }
    if !media.is_empty() {
        let mut content = vec![json!({"type": "text", "text": MEDIA_FROM_TOOL})];
        content.extend(media.iter().map(|a| file_part(&a.mime, a.filename.as_deref(), &a.url)));
        out.push(json!({"role": "user", "content": content}));
    }
    out
}

fn with_options(mut part: Value, options: Option<&Value>) -> Value {
    if let (Some(options), Some(object)) = (options, part.as_object_mut()) {
        object.insert("providerOptions".into(), options.clone());
    }
    part
}

/// The tool's `toModelOutput`: a string is text; output with attachments is content whose
/// `data:` attachments become media.
fn model_output(result: &ToolResult) -> Value {
    match result {
        ToolResult::Text(text) => json!({"type": "text", "value": text}),
        ToolResult::Error(text) => json!({"type": "error-text", "value": text}),
        ToolResult::Content(text, attachments) => {
            let mut value = Vec::new();
            if !text.is_empty() {
                value.push(json!({"type": "text", "text": text}));
            }
            for attachment in attachments {
                let url = attachment.get("url").and_then(Value::as_str).unwrap_or("");
                if let Some(comma) = url.strip_prefix("data:").and_then(|_| url.find(',')) {
                    value.push(json!({"type": "media", "mediaType": attachment.get("mime").cloned().unwrap_or(Value::Null), "data": &url[comma + 1..]}));
                }
            }
            json!({"type": "content", "value": value})
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

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
