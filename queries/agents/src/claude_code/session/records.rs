//! The transcript's records that say what was sent (CC40), one JSON object per line; every
//! other record is skipped.

use std::path::PathBuf;

use serde_json::Value;

/// What one line of the transcript says, as far as the session's costs go.
pub enum Record {
    /// `attachment` `instructions`: the rule-file block's files (path, text).
    Instructions { files: Vec<(String, String)> },
    /// `attachment` `nested_memory`: a rule file attached to a tool's result.
    NestedMemory { path: String },
    /// `system` `compact_boundary`: the history before it was replaced by a summary.
    CompactBoundary,
    /// `api-request-blob`: a user message as sent, by its hash: its strings.
    Blob { hash: String, strings: Vec<String> },
    /// `api-request`: one main-loop request's messages.
    Request { id: String, base: Option<String>, keep: usize, tail: Vec<String> },
    /// `assistant` with tool calls: the files they read or write, and the skills they
    /// invoke (tool call id, skill name).
    ToolUse { cwd: Option<PathBuf>, files: Vec<PathBuf>, skills: Vec<(String, String)> },
    /// A `user` record Claude Code adds for a tool call (`isMeta`, `sourceToolUseID`): a
    /// skill's or command's body, with the call's id.
    MetaText { tool_use: String, texts: Vec<String> },
    /// `attachment` `output_style_instructions` or `output_style`: the style's name.
    OutputStyle { name: String },
    /// Anything else.
    Other { cwd: Option<PathBuf> },
}

/// One line, or what is wrong with it.
pub fn parse(line: &str) -> Result<Record, String> {
    let value: Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
    let Value::Object(record) = value else { return Err("not a JSON object".to_owned()) };
    let kind = record.get("type").and_then(Value::as_str).unwrap_or_default();
    let cwd = record.get("cwd").and_then(Value::as_str).map(PathBuf::from);
    let string = |value: Option<&Value>, what: &str| {
        value
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| format!("{kind}: `{what}` is not a string"))
    };
    Ok(match kind {
        "api-request" => {
            let tail = record
                .get("tail")
                .and_then(Value::as_array)
                .ok_or("api-request: `tail` is not a list")?
                .iter()
                .map(|h| h.as_str().map(str::to_owned).ok_or("api-request: a `tail` hash is not a string"))
                .collect::<Result<Vec<_>, _>>()?;
            let keep = match record.get("keep") {
                None => 0,
                Some(keep) => keep
                    .as_u64()
                    .and_then(|keep| usize::try_from(keep).ok())
                    .ok_or("api-request: `keep` is not a count")?,
            };
            let base = match record.get("base") {
                None | Some(Value::Null) => None,
                Some(base) => Some(string(Some(base), "base")?),
            };
            Record::Request { id: string(record.get("id"), "id")?, base, keep, tail }
        }
        "api-request-blob" => {
            let message = record.get("message").ok_or("api-request-blob: no `message`")?;
            let mut strings = Vec::new();
            if let Some(content) = message.get("content") {
                collect(content, &mut strings);
            }
            Record::Blob { hash: string(record.get("hash"), "hash")?, strings }
        }
        "attachment" => {
            let attachment = record.get("attachment").unwrap_or(&Value::Null);
            match attachment.get("type").and_then(Value::as_str) {
                Some("instructions") => {
                    let files = attachment
                        .get("files")
                        .and_then(Value::as_array)
                        .map(Vec::as_slice)
                        .unwrap_or_default();
                    let files = files
                        .iter()
                        .map(|f| Ok((string(f.get("path"), "path")?, string(f.get("content"), "content")?)))
                        .collect::<Result<Vec<_>, String>>()?;
                    Record::Instructions { files }
                }
                Some("nested_memory") => {
                    Record::NestedMemory { path: string(attachment.get("path"), "path")? }
                }
                Some("output_style_instructions") => Record::OutputStyle {
                    name: string(attachment.get("style").and_then(|s| s.get("name")), "name")?,
                },
                Some("output_style") => {
                    Record::OutputStyle { name: string(attachment.get("style"), "style")? }
                }
                _ => Record::Other { cwd },
            }
        }
        "system" if record.get("subtype").and_then(Value::as_str) == Some("compact_boundary") => {
            Record::CompactBoundary
        }
        "assistant" => {
            let blocks = record
                .get("message")
                .and_then(|m| m.get("content"))
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or_default();
            let uses: Vec<&Value> =
                blocks.iter().filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use")).collect();
            let files = uses
                .iter()
                .filter_map(|b| {
                    let input = b.get("input")?;
                    input.get("file_path").or_else(|| input.get("notebook_path"))?.as_str().map(PathBuf::from)
                })
                .collect();
            let skills = uses
                .iter()
                .filter(|b| b.get("name").and_then(Value::as_str) == Some("Skill"))
                .filter_map(|b| {
                    let id = b.get("id")?.as_str()?;
                    let skill = b.get("input")?.get("skill")?.as_str()?;
                    Some((id.to_owned(), skill.to_owned()))
                })
                .collect();
            Record::ToolUse { cwd, files, skills }
        }
        "user" if record.get("isMeta") == Some(&Value::Bool(true)) => {
            match record.get("sourceToolUseID").and_then(Value::as_str) {
                Some(id) => {
                    let mut texts = Vec::new();
                    if let Some(content) = record.get("message").and_then(|m| m.get("content")) {
                        collect(content, &mut texts);
                    }
                    Record::MetaText { tool_use: id.to_owned(), texts }
                }
                None => Record::Other { cwd },
            }
        }
        _ => Record::Other { cwd },
    })
}

/// Every text of a message's content: a string, text blocks, tool results (a string or
/// blocks of their own).
fn collect(content: &Value, into: &mut Vec<String>) {
    match content {
        Value::String(text) => into.push(text.clone()),
        Value::Array(blocks) => {
            for block in blocks {
                if let Some(text) = block.get("text").and_then(Value::as_str) {
                    into.push(text.to_owned());
                }
                if let Some(inner) = block.get("content") {
                    collect(inner, into);
                }
            }
        }
        _ => {}
    }
}
