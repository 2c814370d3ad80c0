//! The records of a workspace memory (memory.md §3–§9), as they are stored, and the
//! tolerant readers every consumer shares.
//!
//! Readers never fail on a bad line: a malformed line, a torn last line (no final `\n`) and
//! a record of a newer schema version are skipped and reported by line number (§3.1), so a
//! half-written or hand-edited store still recalls everything it can.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The schema version this build writes and the newest it reads (§3.1 `v`).
pub const SCHEMA_VERSION: u32 = 1;

/// The store's file names, relative to the memory root (§3).
pub const FACTS: &str = "facts.jsonl";
pub const HANDOFF: &str = "handoff.json";
pub const OBSERVATIONS: &str = "observations.jsonl";
pub const OBSERVATION_HASHES: &str = "observation_hashes.json";
pub const TOOL_STATS: &str = "tool_stats.json";
pub const SESSIONS: &str = "sessions.jsonl";
pub const LOCK: &str = ".lock";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    User,
    Project,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FactSource {
    /// The user asked for it to be remembered.
    Explicit,
    /// Extracted by a model after a compaction.
    Compaction,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Active,
    Inactive,
}

/// §4.1: one fact as written (`"type":"fact"`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FactRecord {
    pub v: u32,
    pub id: String,
    pub text: String,
    pub scope: Scope,
    #[serde(default = "other")]
    pub category: String,
    pub source: FactSource,
    #[serde(default = "active")]
    pub status: Status,
    #[serde(rename = "sessionID", default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    pub hash: String,
    pub created_at: i64,
    pub updated_at: i64,
}

fn other() -> String {
    "other".to_owned()
}

fn active() -> Status {
    Status::Active
}

/// §4.1: a status change for a fact (`"type":"status"`): forgetting appends one.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct StatusRecord {
    pub v: u32,
    pub id: String,
    pub status: Status,
    pub reason: String,
    #[serde(rename = "sessionID", default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    pub at: i64,
}

/// One line of `facts.jsonl`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum FactLine {
    Fact(FactRecord),
    Status(StatusRecord),
}

/// A fact's current state: its last fact record with the last status applied.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Fact {
    pub record: FactRecord,
    /// Why it is inactive, when it is.
    pub reason: Option<String>,
    /// When the status last changed (the record's `updatedAt` otherwise).
    pub status_at: i64,
}

impl Fact {
    pub fn is_active(&self) -> bool {
        self.record.status == Status::Active
    }
}

/// §4.1: folds the log in file order; for each id the last record wins. Facts keep the
/// order of their first appearance (which, with ascending ids, is creation order).
pub fn fold_facts(lines: impl IntoIterator<Item = FactLine>) -> Vec<Fact> {
    let mut order: Vec<String> = Vec::new();
    let mut by_id: BTreeMap<String, Fact> = BTreeMap::new();
    for line in lines {
        match line {
            FactLine::Fact(record) => {
                let status_at = record.updated_at;
                if !by_id.contains_key(&record.id) {
                    order.push(record.id.clone());
                }
                let reason = (record.status == Status::Inactive).then(|| "inactive when written".to_owned());
                by_id.insert(record.id.clone(), Fact { record, reason, status_at });
            }
            FactLine::Status(status) => {
                // A status for an id never seen has nothing to change.
                if let Some(fact) = by_id.get_mut(&status.id) {
                    fact.record.status = status.status;
                    fact.reason = (status.status == Status::Inactive).then_some(status.reason);
                    fact.status_at = status.at;
                }
            }
        }
    }
    order.into_iter().filter_map(|id| by_id.remove(&id)).collect()
}

/// §6.1: one observation from a settled tool call.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Observation {
    pub v: u32,
    pub id: String,
    #[serde(rename = "sessionID", default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    pub tool: String,
    pub outcome: String,
    pub kind: String,
    pub l0: String,
    #[serde(default)]
    pub l1: String,
    #[serde(default)]
    pub files: Vec<String>,
    #[serde(default)]
    pub keywords: Vec<String>,
    pub evidence_hash: String,
    pub text_hash: String,
    pub created_at: i64,
}

/// §5.1: the one current task snapshot.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Handoff {
    pub v: u32,
    #[serde(rename = "sessionID", default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    pub updated_at: i64,
    #[serde(default)]
    pub source: String,
    #[serde(default)]
    pub goal: String,
    #[serde(default)]
    pub status: String,
    #[serde(default)]
    pub done: Vec<String>,
    #[serde(default)]
    pub in_progress: Vec<String>,
    #[serde(default)]
    pub next: Vec<String>,
    #[serde(default)]
    pub decisions: Vec<String>,
    #[serde(default)]
    pub files: Vec<String>,
    #[serde(default)]
    pub constraints: Vec<String>,
    #[serde(default)]
    pub open_questions: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_estimate: Option<u64>,
}

/// §7.1: `tool_stats.json`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolStats {
    pub v: u32,
    pub updated_at: i64,
    #[serde(default)]
    pub tools: BTreeMap<String, ToolStat>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolStat {
    pub calls: u64,
    pub errors: u64,
    pub consecutive_errors: u64,
    /// The last [`RECENT_WINDOW`] outcomes, `s` or `e` (`p` for a permission rejection,
    /// which is not a tool failure), newest last.
    #[serde(default)]
    pub recent: String,
    #[serde(default)]
    pub error_kinds: BTreeMap<String, u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<LastError>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_success_at: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error_at: Option<i64>,
}

/// §7.1: how many outcomes `recent` keeps.
pub const RECENT_WINDOW: usize = 20;

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct LastError {
    pub message: String,
    pub at: i64,
}

/// §6.2: `observation_hashes.json`, evidence hashes already sent to a model.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObservationHashes {
    pub v: u32,
    #[serde(default)]
    pub hashes: BTreeMap<String, i64>,
}

/// §9.1: a card for an archived session.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionCard {
    pub v: u32,
    pub id: String,
    #[serde(rename = "sessionID")]
    pub session_id: String,
    #[serde(rename = "parentID", default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    #[serde(default)]
    pub title: String,
    pub created_at: i64,
    pub archived_at: i64,
    #[serde(default)]
    pub goal: String,
    #[serde(default)]
    pub summary: String,
    #[serde(default = "unknown")]
    pub outcome: String,
    #[serde(default)]
    pub files: Vec<String>,
    #[serde(default)]
    pub tools: BTreeMap<String, u64>,
    #[serde(default)]
    pub errors: u64,
    #[serde(default)]
    pub messages: u64,
    #[serde(default)]
    pub keywords: Vec<String>,
    #[serde(default)]
    pub trajectory: Vec<String>,
}

fn unknown() -> String {
    "unknown".to_owned()
}

/// A line a reader skipped, and why (1-based line number).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Skipped {
    pub line: usize,
    pub reason: String,
}

/// Every record of a JSONL text that parses as `T`, and the lines that did not.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Parsed<T> {
    pub records: Vec<T>,
    pub skipped: Vec<Skipped>,
}

impl<T> Default for Parsed<T> {
    fn default() -> Self {
        Parsed { records: Vec::new(), skipped: Vec::new() }
    }
}

/// §3.1: one object per line. A final line without `\n` is a write that was cut short and
/// is skipped (the writer repairs it before its next append); so is any line that is not a
/// `T`, and any record whose `v` is newer than [`SCHEMA_VERSION`].
pub fn parse_jsonl<T: serde::de::DeserializeOwned>(text: &str) -> Parsed<T> {
    let mut parsed = Parsed::default();
    let mut rest = text;
    let mut number = 0;
    while !rest.is_empty() {
        number += 1;
        let (line, torn) = match rest.split_once('\n') {
            Some((line, tail)) => {
                rest = tail;
                (line, false)
            }
            None => {
                let line = rest;
                rest = "";
                (line, true)
            }
        };
        let line = line.strip_suffix('\r').unwrap_or(line);
        if torn {
            parsed.skipped.push(Skipped { line: number, reason: "torn last line (no newline)".to_owned() });
            continue;
        }
        if line.trim().is_empty() {
            continue;
        }
        match parse_record::<T>(line) {
            Ok(record) => parsed.records.push(record),
            Err(reason) => parsed.skipped.push(Skipped { line: number, reason }),
        }
    }
    parsed
}

/// One JSON document as `T`, refusing newer schema versions.
pub fn parse_record<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, String> {
    let value: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    match value.get("v").and_then(Value::as_u64) {
        Some(v) if v > u64::from(SCHEMA_VERSION) => {
            return Err(format!("schema version {v} is newer than {SCHEMA_VERSION}"));
        }
        Some(_) => {}
        None => return Err("no schema version `v`".to_owned()),
    }
    serde_json::from_value(value).map_err(|e| format!("not a record: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fact(id: &str, text: &str) -> FactRecord {
        FactRecord {
            v: 1,
            id: id.to_owned(),
            text: text.to_owned(),
            scope: Scope::Project,
            category: "tooling".to_owned(),
            source: FactSource::Explicit,
            status: Status::Active,
            session_id: Some("ses_1".to_owned()),
            hash: "0123456789abcdef".to_owned(),
            created_at: 1,
            updated_at: 2,
        }
    }

    #[test]
    fn every_record_round_trips() {
        fn round_trip<T: Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug>(value: T) {
            let text = serde_json::to_string(&value).unwrap();
            assert_eq!(parse_record::<T>(&text).unwrap(), value, "{text}");
        }
        round_trip(FactLine::Fact(fact("fct_1", "Use pnpm")));
        round_trip(FactLine::Status(StatusRecord {
            v: 1,
            id: "fct_1".to_owned(),
            status: Status::Inactive,
            reason: "user-forget".to_owned(),
            session_id: None,
            at: 5,
        }));
        round_trip(Observation {
            v: 1,
            id: "obs_1".to_owned(),
            session_id: None,
            tool: "bash".to_owned(),
            outcome: "error".to_owned(),
            kind: "gotcha".to_owned(),
            l0: "run tests from the package".to_owned(),
            l1: "the preload is relative".to_owned(),
            files: vec!["a/b.toml".to_owned()],
            keywords: vec!["test".to_owned()],
            evidence_hash: "e".to_owned(),
            text_hash: "t".to_owned(),
            created_at: 3,
        });
        round_trip(Handoff {
            v: 1,
            goal: "ship".to_owned(),
            open_questions: vec!["why".to_owned()],
            token_estimate: Some(3),
            ..Handoff::default()
        });
        let mut stats = ToolStats { v: 1, updated_at: 4, tools: BTreeMap::new() };
        stats.tools.insert(
            "edit".to_owned(),
            ToolStat {
                calls: 3,
                errors: 1,
                recent: "sse".to_owned(),
                last_error: Some(LastError { message: "not found".to_owned(), at: 4 }),
                ..ToolStat::default()
            },
        );
        round_trip(stats);
        round_trip(SessionCard {
            v: 1,
            id: "crd_1".to_owned(),
            session_id: "ses_1".to_owned(),
            ..Default::default()
        });
    }

    #[test]
    fn field_names_are_the_specs() {
        let text = serde_json::to_string(&FactLine::Fact(fact("fct_1", "x"))).unwrap();
        assert_eq!(
            text,
            r#"{"type":"fact","v":1,"id":"fct_1","text":"x","scope":"project","category":"tooling","source":"explicit","status":"active","sessionID":"ses_1","hash":"0123456789abcdef","createdAt":1,"updatedAt":2}"#
        );
    }

    #[test]
    fn reader_skips_bad_newer_and_torn_lines() {
        let good = serde_json::to_string(&FactLine::Fact(fact("fct_1", "a"))).unwrap();
        let newer = good.replace("\"v\":1", "\"v\":2");
        let text = format!("{good}\n{{oops\n\n{newer}\n{good}\n{}", &good[..10]);
        let parsed = parse_jsonl::<FactLine>(&text);
        assert_eq!(parsed.records.len(), 2);
        let lines: Vec<usize> = parsed.skipped.iter().map(|s| s.line).collect();
        assert_eq!(lines, [2, 4, 6]);
        assert!(parsed.skipped[2].reason.contains("torn"));
    }

    #[test]
    fn unknown_fields_are_ignored() {
        let text = r#"{"type":"fact","v":1,"id":"fct_1","text":"x","scope":"user","source":"explicit","hash":"h","createdAt":1,"updatedAt":1,"future":true}"#;
        let line: FactLine = parse_record(text).unwrap();
        let FactLine::Fact(record) = line else { panic!("not a fact") };
        assert_eq!(record.category, "other");
        assert_eq!(record.status, Status::Active);
    }

    #[test]
    fn fold_applies_the_last_status() {
        let status = |status, at| {
            FactLine::Status(StatusRecord {
                v: 1,
                id: "fct_1".to_owned(),
                status,
                reason: "user-forget".to_owned(),
                session_id: None,
                at,
            })
        };
        let lines = vec![
            FactLine::Fact(fact("fct_1", "a")),
            FactLine::Fact(fact("fct_2", "b")),
            status(Status::Inactive, 10),
        ];
        let folded = fold_facts(lines.clone());
        assert!(!folded[0].is_active());
        assert_eq!(folded[0].reason.as_deref(), Some("user-forget"));
        assert!(folded[1].is_active());
        let mut reactivated = lines;
        reactivated.push(status(Status::Active, 11));
        let folded = fold_facts(reactivated);
        assert!(folded[0].is_active());
        assert_eq!(folded[0].status_at, 11);
    }
}
