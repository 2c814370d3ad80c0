//! K10: the history a normal step sends (`filterCompacted`), and that history in the shape
//! an openai-compatible provider receives it (the chat-completions `messages` after the
//! system message).

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use super::convert::{Target, TargetModel, model_messages};
use super::export::Role;
use super::runs::{Facts, facts};
use super::{Message, Session};
use ctxgraph_db::Db;

/// K10: the messages a step starts from, oldest first. The last completed compaction cuts
/// the history: without a tail everything before its marker is dropped; with one, the
/// retained tail moves after the summary pair.
#[salsa::tracked(returns(ref))]
pub fn filtered_history(db: &dyn Db, session: Session) -> Vec<Message> {
    filter_compacted(db, session.messages(db))
}

/// [`filtered_history`] of any list of messages (a step earlier in the session sees the
/// messages before it).
pub fn filter_compacted(db: &dyn Db, messages: &[Message]) -> Vec<Message> {
    let facts = facts(db, messages);
    filter_indices(&facts).into_iter().map(|i| messages[i]).collect()
}

/// [`filter_compacted`] of each prefix of a list in turn (`messages[..0]`, `[..1]`, …),
/// for a walk that needs the history before every message.
///
/// Filtering every prefix anew costs time quadratic in the session. It need not: a message
/// that is neither a compaction marker nor a summary leaves K10's backward walk as it found
/// it (it answers no marker and is no marker), and no reordering moves it, so it only joins
/// the end of the history. Only markers and summaries re-run the filter.
pub struct GrowingHistory<'db> {
    messages: &'db [Message],
    /// The prefix covered: `messages[..len]`.
    len: usize,
    history: Vec<Message>,
    /// The ids of `history`.
    ids: HashSet<String>,
}

/// How the history changed when the prefix grew by one message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Growth {
    /// The message joined the end of the history.
    Appended(Message),
    /// The message reshaped the history (a compaction marker or a summary): filtered anew.
    Refiltered,
}

impl<'db> GrowingHistory<'db> {
    /// The history of no message, growing along `messages`.
    pub fn new(messages: &'db [Message]) -> Self {
        GrowingHistory { messages, len: 0, history: Vec::new(), ids: HashSet::new() }
    }

    /// `filter_compacted(db, &messages[..len])`, `len` being how far the prefix grew.
    pub fn history(&self) -> &[Message] {
        &self.history
    }

    /// A message with this id is in the history.
    pub fn contains_id(&self, id: &str) -> bool {
        self.ids.contains(id)
    }

    /// Takes in the next message of the list (none left: nothing changes).
    pub fn grow(&mut self, db: &dyn Db) -> Option<Growth> {
        let &message = self.messages.get(self.len)?;
        self.len += 1;
        if message.compaction_part(db).is_some() || message.info(db).is_summary() {
            self.history = filter_compacted(db, &self.messages[..self.len]);
            self.ids = self.history.iter().map(|m| m.id(db).to_owned()).collect();
            return Some(Growth::Refiltered);
        }
        self.history.push(message);
        self.ids.insert(message.id(db).to_owned());
        Some(Growth::Appended(message))
    }
}

/// K10 over the messages' facts: the indices kept, in the order the model sees them.
fn filter_indices(facts: &[&Facts]) -> Vec<usize> {
    // Markers whose summary finished without error.
    let mut answered: HashSet<&str> = HashSet::new();
    let mut tail: Option<&str> = None;
    let mut start = 0;
    for (i, message) in facts.iter().enumerate().rev() {
        if let Some(tail_id) = tail {
            if message.id == tail_id {
                start = i;
                break;
            }
            continue;
        }
        if message.role == Role::User && answered.contains(message.id.as_str()) {
            let Some(marker) = &message.marker else { continue };
            match marker.tail_start_id.as_deref() {
                None => {
                    start = i;
                    break;
                }
                Some(tail_id) => {
                    tail = Some(tail_id);
                    if message.id == tail_id {
                        start = i;
                        break;
                    }
                    continue;
                }
            }
        }
        if message.completed_summary
            && let Some(parent) = message.parent_id.as_deref()
        {
            answered.insert(parent);
        }
    }
    let kept: Vec<usize> = (start..facts.len()).collect();
    // Reorder [tail…, marker, summary, after…] into [marker, summary, tail…, after…].
    let has_tail = |i: usize| facts[i].marker.as_ref().is_some_and(|m| m.tail_start_id.is_some());
    if let Some(w) = kept.iter().rposition(|&i| has_tail(i)) {
        let marker = facts[kept[w]];
        let tail_id = marker.marker.as_ref().and_then(|m| m.tail_start_id.as_deref());
        let summary_at = kept.iter().enumerate().position(|(at, &i)| {
            at > w && facts[i].summary && facts[i].parent_id.as_deref() == Some(marker.id.as_str())
        });
        let tail_at = tail_id.and_then(|id| kept.iter().position(|&i| facts[i].id == id));
        if let (Some(v), Some(j)) = (tail_at, summary_at)
            && v < w
        {
            let mut out = kept[w..=j].to_vec();
            out.extend_from_slice(&kept[v..w]);
            out.extend_from_slice(&kept[j + 1..]);
            return out;
        }
    }
    kept
}

/// The `ModelMessage`s of a list of stored messages, in order.
pub fn to_model_messages(db: &dyn Db, messages: &[Message], target: &TargetModel) -> Vec<Value> {
    let target = Target::new(db, target.clone());
    messages.iter().flat_map(|&m| model_messages(db, m, target).iter().cloned()).collect()
}

/// The next normal step's `messages` after the system message, as `@ai-sdk/openai-compatible`
/// sends them.
#[salsa::tracked(returns(ref))]
pub fn next_call_messages(db: &dyn Db, session: Session, target: TargetModel) -> Vec<Value> {
    let history = filtered_history(db, session);
    to_model_messages(db, history, &target).iter().flat_map(openai_compatible).collect()
}

/// One `ModelMessage` → chat-completions messages (a tool message becomes one per result).
pub fn openai_compatible(message: &Value) -> Vec<Value> {
    let content = message.get("content").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let kind = |part: &Value| part.get("type").and_then(Value::as_str).unwrap_or("").to_owned();
    let text = |part: &Value| part.get("text").and_then(Value::as_str).unwrap_or("").to_owned();
    match message.get("role").and_then(Value::as_str) {
        Some("user") => {
            if let [only] = content
                && kind(only) == "text"
            {
                return vec![json!({"role": "user", "content": text(only)})];
            }
            let parts: Vec<Value> = content.iter().filter_map(user_part).collect();
            vec![json!({"role": "user", "content": parts})]
        }
        Some("assistant") => {
            let mut body = String::new();
            let mut reasoning = String::new();
            let mut calls = Vec::new();
            for part in content {
                match kind(part).as_str() {
                    "text" => body.push_str(&text(part)),
                    "reasoning" => reasoning.push_str(&text(part)),
                    "tool-call" => {
                        let input = part.get("input").map_or_else(|| "undefined".into(), std::string::ToString::to_string);
                        calls.push(json!({
                            "id": part.get("toolCallId").cloned().unwrap_or(Value::Null),
                            "type": "function",
                            "function": {"name": part.get("toolName").cloned().unwrap_or(Value::Null), "arguments": input},
                        }));
                    }
                    _ => {}
                }
            }
            let mut out = Map::new();
            out.insert("role".into(), "assistant".into());
            out.insert("content".into(), body.into());
            if !reasoning.is_empty() {
                out.insert("reasoning_content".into(), reasoning.into());
            }
            if !calls.is_empty() {
                out.insert("tool_calls".into(), calls.into());
            }
            vec![Value::Object(out)]
        }
        Some("tool") => content
            .iter()
            .map(|result| {
                let output = result.get("output").cloned().unwrap_or(Value::Null);
                let body = match output.get("type").and_then(Value::as_str) {
                    Some("text" | "error-text") => output.get("value").cloned().unwrap_or(Value::Null),
                    _ => Value::String(output.get("value").map(Value::to_string).unwrap_or_default()),
                };
                json!({"role": "tool", "tool_call_id": result.get("toolCallId").cloned().unwrap_or(Value::Null), "content": body})
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn user_part(part: &Value) -> Option<Value> {
    match part.get("type").and_then(Value::as_str)? {
        "text" => Some(json!({"type": "text", "text": part.get("text")?})),
        "file" => {
            let mime = part.get("mediaType").and_then(Value::as_str)?;
            let data = part.get("data").and_then(Value::as_str).unwrap_or("");
            if mime.starts_with("image/") {
                Some(json!({"type": "image_url", "image_url": {"url": data}}))
            } else if mime == "application/pdf" {
                let filename = part.get("filename").and_then(Value::as_str).unwrap_or("document.pdf");
                Some(json!({"type": "file", "file": {"filename": filename, "file_data": data}}))
            } else {
                Some(json!({"type": "text", "text": data}))
            }
        }
        _ => None,
    }
}
