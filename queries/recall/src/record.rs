//! The records of a workspace memory (docs/memory.md §3–§9), as they are stored, and the
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
/// The current task snapshot (§5).
pub const HANDOFF: &str = "handoff.json";
/// Observations from tool runs (§6).
pub const OBSERVATIONS: &str = "observations.jsonl";
/// Evidence hashes already sent to a model (§6.2).
pub const OBSERVATION_HASHES: &str = "observation_hashes.json";
/// Per-tool outcome counters (§7).
pub const TOOL_STATS: &str = "tool_stats.json";
/// Cards of archived sessions (§9).
pub const SESSIONS: &str = "sessions.jsonl";
/// The cross-process lock file (§3.4).
pub const LOCK: &str = ".lock";

/// The largest store file that is read or written (64 MiB, the engine's limit for any
/// file it reads). A larger one is refused by name, never read as empty.
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// Whom a fact is about (§4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// The person: preferences, style.
    User,
    /// The code base.
    Project,
}

impl Scope {
    /// The name as stored and rendered (`user`, `project`).
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
        }
    }
}

/// Where a fact came from (§4.1 `source`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FactSource {
    /// The user asked for it to be remembered.
    Explicit,
    /// Extracted by a model after a compaction.
    Compaction,
}

/// Whether a fact is recalled (§4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Recalled.
    Active,
    /// Forgotten, superseded or evicted: never recalled.
    Inactive,
}

/// §4.1: one fact as written (`"type":"fact"`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FactRecord {
    /// Schema version (§3.1).
    pub v: u32,
    /// `fct_…`, ascending with creation time.
    pub id: String,
    /// The fact, redacted, at most 300 characters.
    pub text: String,
    /// Whom it is about.
    pub scope: Scope,
    /// `preference`, `convention`, `tooling`, `environment`, `architecture` or `other`.
    #[serde(default = "other")]
    pub category: String,
    /// Who asked for it.
    pub source: FactSource,
    /// The status it was written with; later status records override it.
    #[serde(default = "active")]
    pub status: Status,
    /// The session that wrote it.
    #[serde(rename = "sessionID", default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// `hash(normalize(text))` (§3.2), the exact-duplicate key.
    pub hash: String,
    /// Epoch milliseconds.
    pub created_at: i64,
    /// Epoch milliseconds; what recency decay measures from.
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
    /// Schema version (§3.1).
    pub v: u32,
    /// The fact it changes.
    pub id: String,
    /// The new status.
    pub status: Status,
    /// `user-forget`, `superseded`, `evicted`, …
    pub reason: String,
    /// The session that changed it.
    #[serde(rename = "sessionID", default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Epoch milliseconds.
    pub at: i64,
}

/// One line of `facts.jsonl`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum FactLine {
    /// A fact as written.
    Fact(FactRecord),
    /// A later status change of a fact.
    Status(StatusRecord),
}

/// A fact's current state: its last fact record with the last status applied.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Fact {
    /// The last fact record of this id, its `status` set by the last status record.
    pub record: FactRecord,
    /// Why it is inactive, when it is.
    pub reason: Option<String>,
    /// When the status last changed (the record's `updatedAt` otherwise).
    pub status_at: i64,
}

impl Fact {
    /// Whether recall may use it.
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
    /// Schema version (§3.1).
    pub v: u32,
    /// `obs_…`, ascending with creation time.
    pub id: String,
    /// The session whose tool call it came from.
    #[serde(rename = "sessionID", default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The tool that ran.
    pub tool: String,
    /// `completed` or `error`.
    pub outcome: String,
    /// What was learnt: the part a model writes.
    #[serde(flatten)]
    pub note: Note,
    /// Hash of the redacted, normalised evidence (§6.2).
    pub evidence_hash: String,
    /// `hash(normalize(l0))`: the duplicate key.
    pub text_hash: String,
    /// Epoch milliseconds.
    pub created_at: i64,
}

/// The lesson of an observation (§6.1): what an extractor proposes, stored as it came
/// (redacted and cut to length) inside an [`Observation`].
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Note {
    /// `gotcha`, `fix`, `convention`, `environment`, `failure-mode` or `api-behaviour`.
    pub kind: String,
    /// One-line headline (at most [`Note::L0_CHARS`] characters), used in the prompt.
    pub l0: String,
    /// The fuller note (at most [`Note::L1_CHARS`] characters), used when the budget allows.
    #[serde(default)]
    pub l1: String,
    /// Workspace-relative paths it concerns (the file boost looks at them).
    #[serde(default)]
    pub files: Vec<String>,
    /// Extra search terms.
    #[serde(default)]
    pub keywords: Vec<String>,
}

impl Note {
    /// Characters an `l0` headline may take (§6.1): extraction cuts to it, the block shows it.
    pub const L0_CHARS: usize = 160;
    /// Characters an `l1` note may take (§6.1).
    pub const L1_CHARS: usize = 800;
}

/// §5.1: the one current task snapshot.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Handoff {
    /// Schema version (§3.1).
    pub v: u32,
    /// The session that wrote it (§5.3 eligibility).
    #[serde(rename = "sessionID", default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Epoch milliseconds.
    pub updated_at: i64,
    /// `compaction`, or `manual` when set through the CLI.
    #[serde(default)]
    pub source: String,
    /// What the task is.
    #[serde(default)]
    pub goal: String,
    /// `in_progress`, `blocked` or `done`.
    #[serde(default)]
    pub status: String,
    /// Steps finished.
    #[serde(default)]
    pub done: Vec<String>,
    /// Steps under way.
    #[serde(default)]
    pub in_progress: Vec<String>,
    /// Steps still to do.
    #[serde(default)]
    pub next: Vec<String>,
    /// Decisions taken.
    #[serde(default)]
    pub decisions: Vec<String>,
    /// Files the task touches.
    #[serde(default)]
    pub files: Vec<String>,
    /// Constraints to respect.
    #[serde(default)]
    pub constraints: Vec<String>,
    /// Questions still open.
    #[serde(default)]
    pub open_questions: Vec<String>,
    /// `ceil(chars / 4)` of the stored JSON (§5.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_estimate: Option<u64>,
}

/// §7.1: `tool_stats.json`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolStats {
    /// Schema version (§3.1).
    pub v: u32,
    /// Epoch milliseconds.
    pub updated_at: i64,
    /// Counters by tool name.
    #[serde(default)]
    pub tools: BTreeMap<String, ToolStat>,
}

/// One tool's counters (§7.1).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolStat {
    /// Settled calls.
    pub calls: u64,
    /// Failed calls (permission rejections excluded).
    pub errors: u64,
    /// Failures since the last success.
    pub consecutive_errors: u64,
    /// The last [`RECENT_WINDOW`] outcomes, `s` or `e` (`p` for a permission rejection,
    /// which is not a tool failure), newest last.
    #[serde(default)]
    pub recent: String,
    /// Errors by kind (`timeout`, `not_found`, `permission`, `invalid_args`, `other`).
    #[serde(default)]
    pub error_kinds: BTreeMap<String, u64>,
    /// The last error, redacted and cut to 200 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<LastError>,
    /// Epoch milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_success_at: Option<i64>,
    /// Epoch milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error_at: Option<i64>,
}

/// §7.1: how many outcomes `recent` keeps.
pub const RECENT_WINDOW: usize = 20;

/// A tool's last error (§7.1 `lastError`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct LastError {
    /// The message, redacted, at most 200 characters.
    pub message: String,
    /// Epoch milliseconds.
    pub at: i64,
}

/// §6.2: `observation_hashes.json`, evidence hashes already sent to a model.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObservationHashes {
    /// Schema version (§3.1).
    pub v: u32,
    /// Evidence hash → epoch milliseconds it was first seen (the oldest go past 5000).
    #[serde(default)]
    pub hashes: BTreeMap<String, i64>,
}

/// §9.1: a card for an archived session.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionCard {
    /// Schema version (§3.1).
    pub v: u32,
    /// `crd_…`, ascending with creation time.
    pub id: String,
    /// The archived session.
    #[serde(rename = "sessionID")]
    pub session_id: String,
    /// Set for sub-agent sessions, which get no card.
    #[serde(rename = "parentID", default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    /// The session's title.
    #[serde(default)]
    pub title: String,
    /// Epoch milliseconds.
    pub created_at: i64,
    /// Epoch milliseconds; what the card's age is measured from.
    pub archived_at: i64,
    /// What the session set out to do (at most 200 characters).
    #[serde(default)]
    pub goal: String,
    /// What happened (at most 600 characters).
    #[serde(default)]
    pub summary: String,
    /// `completed`, `abandoned` or `unknown`.
    #[serde(default = "unknown")]
    pub outcome: String,
    /// Files edited, most edited first (at most 20).
    #[serde(default)]
    pub files: Vec<String>,
    /// Calls by tool name.
    #[serde(default)]
    pub tools: BTreeMap<String, u64>,
    /// Failed tool calls.
    #[serde(default)]
    pub errors: u64,
    /// Messages in the session.
    #[serde(default)]
    pub messages: u64,
    /// Top terms of title, goal and summary (at most 20).
    #[serde(default)]
    pub keywords: Vec<String>,
    /// Tool steps, runs merged (`read×6`, `bash:test✗`), at most 30.
    #[serde(default)]
    pub trajectory: Vec<String>,
}

fn unknown() -> String {
    "unknown".to_owned()
}

/// A line a reader skipped, and why (1-based line number).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Skipped {
    /// 1-based line number (1 for a whole JSON file).
    pub line: usize,
    /// Why it was skipped.
    pub reason: String,
}

/// Every record of a JSONL text that parses as `T`, and the lines that did not.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Parsed<T> {
    /// The records that parsed, in file order.
    pub records: Vec<T>,
    /// The lines that did not.
    pub skipped: Vec<Skipped>,
}

impl<T> Default for Parsed<T> {
    fn default() -> Self {
        Parsed { records: Vec::new(), skipped: Vec::new() }
    }
}

/// §3.1: one object per line. A final line without `\n` is a write that was cut short and
/// is skipped (the writer cuts it off before its next append), whatever it holds (a crash
/// on a full disk can cut a character in half); so is a line that is not UTF-8, any line
/// that is not a `T`, and any record whose `v` is newer than [`SCHEMA_VERSION`]. Every
/// skipped line is listed.
pub fn parse_jsonl<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Parsed<T> {
    let mut parsed = Parsed::default();
    let mut rest = bytes;
    let mut number = 0;
    while !rest.is_empty() {
        number += 1;
        let Some(end) = rest.iter().position(|&b| b == b'\n') else {
            let reason = format!("torn last line ({} bytes, no newline)", rest.len());
            parsed.skipped.push(Skipped { line: number, reason });
            break;
        };
        let line = &rest[..end];
        rest = &rest[end + 1..];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let line = match std::str::from_utf8(line) {
            Ok(line) => line,
            Err(err) => {
                let reason = format!("not UTF-8 at byte {} of the line", err.valid_up_to());
                parsed.skipped.push(Skipped { line: number, reason });
                continue;
            }
        };
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
            note: Note {
                kind: "gotcha".to_owned(),
                l0: "run tests from the package".to_owned(),
                l1: "the preload is relative".to_owned(),
                files: vec!["a/b.toml".to_owned()],
                keywords: vec!["test".to_owned()],
            },
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
        let parsed = parse_jsonl::<FactLine>(text.as_bytes());
        assert_eq!(parsed.records.len(), 2);
        let lines: Vec<usize> = parsed.skipped.iter().map(|s| s.line).collect();
        assert_eq!(lines, [2, 4, 6]);
        assert!(parsed.skipped[2].reason.contains("torn"));
    }

    #[test]
    fn reader_skips_and_lists_lines_that_are_not_utf8() {
        let good = serde_json::to_string(&FactLine::Fact(fact("fct_1", "a"))).unwrap();
        // A middle line with an invalid byte inside a string, then a last line cut inside
        // a two-byte character (what a full disk leaves).
        let at = good.find("\"text\":\"a").unwrap() + 9;
        let bad = [&good.as_bytes()[..at], &[0xFF], &good.as_bytes()[at..]].concat();
        let mut bytes = format!("{good}\n").into_bytes();
        bytes.extend_from_slice(&bad);
        bytes.push(b'\n');
        bytes.extend_from_slice(format!("{good}\n").as_bytes());
        bytes.extend_from_slice(&good.as_bytes()[..20]);
        bytes.push(0xC3);
        let parsed = parse_jsonl::<FactLine>(&bytes);
        assert_eq!(parsed.records.len(), 2);
        let skipped: Vec<(usize, bool)> =
            parsed.skipped.iter().map(|s| (s.line, s.reason.contains("UTF-8"))).collect();
        assert_eq!(skipped, [(2, true), (4, false)], "{:?}", parsed.skipped);
        assert!(parsed.skipped[1].reason.contains("torn"));
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
