//! What compaction reads of one message, memoized per message so that an append re-reads
//! nothing older (docs/opencode/compaction.md): the message as the summarizer's conversation
//! shows it, and the tool outputs pruning may walk over. The session-level walks
//! (compaction.rs) read these through the runs (runs.rs).

use std::borrow::Cow;
use std::fmt::Write as _;

use super::export::{PartKind, Role};
use super::{Message, estimate, js_prefix};
use ctxgraph_db::Db;

/// Erratum: tool outputs in the summarizer's conversation are cut to this many UTF-16 units.
pub const TOOL_OUTPUT_MAX_CHARS: usize = 2_000;
/// K11: tools whose outputs are never pruned.
pub const PRUNE_PROTECTED_TOOLS: &[&str] = &["skill"];

/// One message as the summarizer reads it (erratum): `[User]: …`, `[Assistant]: …`,
/// tool calls with their results cut to 2000 UTF-16 units. Empty for a message with
/// nothing to show.
#[salsa::tracked(returns(ref))]
pub fn summary_entry(db: &dyn Db, message: Message) -> String {
    // Written line by line into one string: a message of thousands of tool calls made a
    // string per line, then copied them all into the entry.
    let parts = message.parts(db);
    let mut entry = Lines::default();
    if message.info(db).role == Role::User {
        let mut texts = parts
            .iter()
            .filter(|p| p.kind() == PartKind::Text && p.ignored != Some(true))
            .map(super::export::Part::text)
            .filter(|t| !t.is_empty())
            .peekable();
        if texts.peek().is_some() {
            let line = entry.line();
            line.push_str("[User]: ");
            for (k, text) in texts.enumerate() {
                if k > 0 {
                    line.push('\n');
                }
                line.push_str(text);
            }
        }
        for p in parts.iter().filter(|p| p.kind() == PartKind::File) {
            let _ = write!(
                entry.line(),
                "[Attached {}: {}]",
                p.mime.as_deref().unwrap_or(""),
                p.filename.as_deref().unwrap_or("file")
            );
        }
        return entry.0;
    }
    for part in parts {
        match part.kind() {
            PartKind::Text if !part.text().is_empty() => {
                let _ = write!(entry.line(), "[Assistant]: {}", part.text());
            }
            PartKind::Reasoning if !part.text().is_empty() => {
                let _ = write!(entry.line(), "[Assistant reasoning]: {}", part.text());
            }
            PartKind::Tool => {
                let Some(state) = &part.state else { continue };
                let line = entry.line();
                let _ = write!(line, "[Assistant tool call]: {}(", part.tool.as_deref().unwrap_or(""));
                match &state.input {
                    Some(input) => {
                        line.push_str(input.json());
                        line.push(')');
                    }
                    None => line.push_str("undefined)"),
                }
                match state.status {
                    super::export::ToolStatus::Completed => {
                        let result = if state.is_compacted() {
                            Cow::Borrowed(super::convert::CLEARED_OUTPUT)
                        } else {
                            let mut text = Cow::Borrowed(state.output());
                            for a in state.attachments.iter().flatten() {
                                let _ = write!(
                                    text.to_mut(),
                                    "\n[Attached {}: {}]",
                                    a.mime,
                                    a.filename.as_deref().unwrap_or("file")
                                );
                            }
                            truncate_output(text)
                        };
                        let _ = write!(entry.line(), "[Tool result]: {result}");
                    }
                    super::export::ToolStatus::Error => {
                        let _ =
                            write!(entry.line(), "[Tool error]: {}", state.error.as_deref().unwrap_or(""));
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    entry.0
}

/// Lines joined by `\n` as they are written.
#[derive(Default)]
struct Lines(String, bool);

impl Lines {
    /// The text, ready for the next line.
    fn line(&mut self) -> &mut String {
        if std::mem::replace(&mut self.1, true) {
            self.0.push('\n');
        }
        &mut self.0
    }
}

/// Erratum: the first 2000 UTF-16 units + `\n[truncated]`.
fn truncate_output(text: Cow<'_, str>) -> Cow<'_, str> {
    if super::js_len(&text) <= TOOL_OUTPUT_MAX_CHARS {
        return text;
    }
    format!("{}\n[truncated]", js_prefix(&text, TOOL_OUTPUT_MAX_CHARS)).into()
}

/// One completed tool output pruning may walk over (protected tools left out).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolOutput {
    /// The tool part.
    pub part_id: String,
    /// Already pruned (`time.compacted` set): pruning stops here.
    pub compacted: bool,
    /// K1 estimate of the output.
    pub tokens: u64,
}

/// A message's completed tool outputs, in part order, memoized per message so that pruning
/// a long session re-estimates nothing after an append.
#[salsa::tracked(returns(ref))]
pub fn tool_outputs(db: &dyn Db, message: Message) -> Vec<ToolOutput> {
    message
        .parts(db)
        .iter()
        .filter_map(|part| {
            let state = part.completed_tool()?;
            if PRUNE_PROTECTED_TOOLS.contains(&part.tool.as_deref().unwrap_or("")) {
                return None;
            }
            Some(ToolOutput {
                part_id: part.id.clone(),
                compacted: state.is_compacted(),
                tokens: estimate(state.output()),
            })
        })
        .collect()
}
