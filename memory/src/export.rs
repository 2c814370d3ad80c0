//! A session card from an `opencode export` JSON document (§9.2's deterministic fallback:
//! title + first user message + files, no model).
//!
//! Fields read: `info.{id,title,parentID,time.created}`, and per message `info.role` and
//! the `text` and `tool` parts (`tool`, `state.status`, `state.input.filePath`). Anything
//! else is ignored, so newer exports still load.

use std::collections::BTreeMap;

use crate::record::{SCHEMA_VERSION, SessionCard};
use crate::render::cut_at_word;
use crate::tokenize::tokens;
use serde_json::Value;

use crate::StoreError;

const GOAL_CHARS: usize = 200;
const SUMMARY_CHARS: usize = 600;
const MAX_FILES: usize = 20;
const MAX_KEYWORDS: usize = 20;
const MAX_STEPS: usize = 30;
/// Tools whose `filePath` counts as an edited file.
const EDITING: &[&str] = &["edit", "write", "patch", "multiedit"];

/// Builds the card; `now` is the archive time.
pub fn card_from_export(json: &str, now: i64) -> Result<SessionCard, StoreError> {
    let export: Value = serde_json::from_str(json).map_err(|e| {
        StoreError::Invalid(format!("export: not JSON at line {} column {}: {e}", e.line(), e.column()))
    })?;
    let info =
        export.get("info").ok_or_else(|| StoreError::Invalid("export: no `info` object".to_owned()))?;
    let session_id = info
        .get("id")
        .and_then(Value::as_str)
        .ok_or_else(|| StoreError::Invalid("export: `info.id` is missing".to_owned()))?;
    let title = info.get("title").and_then(Value::as_str).unwrap_or("").to_owned();
    let created = info.pointer("/time/created").and_then(Value::as_i64).unwrap_or(now);
    let messages = export.get("messages").and_then(Value::as_array).cloned().unwrap_or_default();

    let mut first_user = String::new();
    let mut edits: BTreeMap<String, (u64, usize)> = BTreeMap::new();
    let mut tools: BTreeMap<String, u64> = BTreeMap::new();
    let mut errors = 0;
    let mut steps: Vec<String> = Vec::new();
    for message in &messages {
        let role = message.pointer("/info/role").and_then(Value::as_str).unwrap_or("");
        for part in message.get("parts").and_then(Value::as_array).into_iter().flatten() {
            match part.get("type").and_then(Value::as_str) {
                Some("text") if role == "user" && first_user.is_empty() => {
                    part.get("text").and_then(Value::as_str).unwrap_or("").trim().clone_into(&mut first_user);
                }
                Some("tool") => {
                    let tool = part.get("tool").and_then(Value::as_str).unwrap_or("unknown").to_owned();
                    let failed = part.pointer("/state/status").and_then(Value::as_str) == Some("error");
                    *tools.entry(tool.clone()).or_default() += 1;
                    if failed {
                        errors += 1;
                    }
                    if EDITING.contains(&tool.as_str())
                        && let Some(path) = part.pointer("/state/input/filePath").and_then(Value::as_str)
                    {
                        let order = edits.len();
                        edits.entry(path.to_owned()).or_insert((0, order)).0 += 1;
                    }
                    steps.push(if failed { format!("{tool}✗") } else { tool });
                }
                _ => {}
            }
        }
    }
    let mut files: Vec<(String, (u64, usize))> = edits.into_iter().collect();
    files.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.1.1.cmp(&b.1.1)));
    let files: Vec<String> = files.into_iter().take(MAX_FILES).map(|(f, _)| f).collect();
    let goal = cut_at_word(&first_user, GOAL_CHARS);
    let summary = if files.is_empty() {
        cut_at_word(&first_user, SUMMARY_CHARS)
    } else {
        cut_at_word(&format!("{first_user} (edited {})", files.join(", ")), SUMMARY_CHARS)
    };
    Ok(SessionCard {
        v: SCHEMA_VERSION,
        id: String::new(),
        session_id: session_id.to_owned(),
        parent_id: info.get("parentID").and_then(Value::as_str).map(str::to_owned),
        keywords: keywords(&format!("{title} {goal} {summary}")),
        title,
        created_at: created,
        archived_at: now,
        goal,
        summary,
        outcome: "unknown".to_owned(),
        files,
        tools,
        errors,
        messages: messages.len() as u64,
        trajectory: run_length(&steps),
    })
}

/// The most frequent tokens (ties: first seen), at most 20.
fn keywords(text: &str) -> Vec<String> {
    let mut counts: Vec<(String, usize, usize)> = Vec::new();
    for (position, token) in tokens(text).into_iter().enumerate() {
        match counts.iter_mut().find(|(t, _, _)| *t == token) {
            Some(entry) => entry.1 += 1,
            None => counts.push((token, 1, position)),
        }
    }
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.2.cmp(&b.2)));
    counts.into_iter().take(MAX_KEYWORDS).map(|(t, _, _)| t).collect()
}

/// `read, read, edit` → `read×2, edit`, at most 30 entries.
fn run_length(steps: &[String]) -> Vec<String> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for step in steps {
        match out.last_mut() {
            Some((last, n)) if last == step => *n += 1,
            _ => out.push((step.clone(), 1)),
        }
    }
    out.into_iter().take(MAX_STEPS).map(|(s, n)| if n > 1 { format!("{s}×{n}") } else { s }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_a_card_from_an_export() {
        let export = r#"{"info":{"id":"ses_1","title":"Fix the cache","time":{"created":5}},
          "messages":[
            {"info":{"role":"user"},"parts":[{"type":"text","text":"The LRU cache evicts the wrong entry"}]},
            {"info":{"role":"assistant"},"parts":[
              {"type":"tool","tool":"read","state":{"status":"completed","input":{"filePath":"src/lru.rs"}}},
              {"type":"tool","tool":"read","state":{"status":"completed","input":{}}},
              {"type":"tool","tool":"edit","state":{"status":"error","input":{"filePath":"src/lru.rs"}}},
              {"type":"tool","tool":"edit","state":{"status":"completed","input":{"filePath":"src/lru.rs"}}}]}]}"#;
        let card = card_from_export(export, 99).unwrap();
        assert_eq!(card.session_id, "ses_1");
        assert_eq!(card.goal, "The LRU cache evicts the wrong entry");
        assert_eq!(card.files, ["src/lru.rs"]);
        assert_eq!(card.trajectory, ["read×2", "edit✗", "edit"]);
        assert_eq!(card.errors, 1);
        assert_eq!(card.messages, 2);
        assert_eq!(card.archived_at, 99);
        assert!(card.keywords.starts_with(&["cache".to_owned()]), "{:?}", card.keywords);
    }

    #[test]
    fn bad_exports_say_what_is_wrong() {
        assert!(card_from_export("{", 0).unwrap_err().to_string().contains("line 1"));
        assert!(card_from_export("{}", 0).unwrap_err().to_string().contains("info"));
    }
}
