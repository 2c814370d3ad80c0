//! ctxgraph's workspace memory: the store (docs/memory.md §3–§9) and its recall (§10–§11).
//!
//! Six files under `<workspace>/.opencode/memory/`. Every write holds the cross-process
//! lock; logs grow by whole lines, JSON files are replaced whole; secrets are redacted
//! before anything is written, hashed or sent to a model. Unlike the spec's best-effort
//! store, nothing is ever dropped: a writer that cannot get the lock in time fails with
//! [`StoreError::LockTimeout`] and the caller sees it.
//!
//! Reading for recall is salsa queries over the store's files ([`recall`]); the [`Store`]
//! reads only what a write needs, fresh, under the lock.

pub mod export;
pub mod extract;
mod files;
pub mod redact;
pub mod text;

// The read side (record format, recall queries) lives in the no-I/O crate ctxgraph-recall;
// re-exported so that the store's users name one crate.
pub use ctxgraph_recall::{rank, recall, record, render, tokenize};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::rank::{Doc, rank};
use crate::record::{
    Fact, FactLine, FactRecord, FactSource, Handoff, LastError, RECENT_WINDOW, SCHEMA_VERSION, Scope,
    SessionCard, Status, StatusRecord, ToolStat, ToolStats,
};
use serde_json::Value;

pub use files::LOCK_WAIT;
use redact::Redactor;

/// Why a memory operation did not happen. Every variant names the file involved.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{}: another process held the memory lock for {waited:?}; nothing was written", path.display())]
    LockTimeout { path: PathBuf, waited: Duration },
    #[error("{}: {reason}", path.display())]
    Corrupt { path: PathBuf, reason: String },
    /// A store path that is not a regular file inside the workspace within the size limit
    /// (a directory, a FIFO, a device, a link out of the workspace, too large).
    #[error("{}: {reason}", path.display())]
    Unusable { path: PathBuf, reason: String },
    /// The input itself is unusable (empty text, invalid handoff JSON, …).
    #[error("{0}")]
    Invalid(String),
    #[error("not stored: more than half of the text is secrets ({kinds})")]
    MostlySecret { kinds: String },
    #[error("no fact matches {0:?}")]
    NoMatch(String),
    #[error("extraction failed: {0}")]
    Extract(String),
}

impl StoreError {
    /// Bad input (exit 2) rather than a failure of the machine (exit 3).
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            StoreError::Corrupt { .. }
                | StoreError::Unusable { .. }
                | StoreError::Invalid(_)
                | StoreError::MostlySecret { .. }
                | StoreError::NoMatch(_)
                // The model's endpoint failed or answered nonsense: not ctxgraph's bug.
                | StoreError::Extract(_)
        )
    }
}

/// Milliseconds since the epoch.
pub type Clock = fn() -> i64;

pub fn system_clock() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// §4.4: active facts kept before the oldest are evicted.
pub const MAX_ACTIVE_FACTS: usize = 200;
/// §4.3: token-set Jaccard at or above this, same scope: an update of the older fact.
const NEAR_DUPLICATE: f64 = 0.8;
/// §4.2: a fact's text is at most this long.
pub const MAX_FACT_CHARS: usize = 300;
/// A category (`tooling`, …) is a label: at most this long, so a record stays a line.
pub const MAX_CATEGORY_CHARS: usize = 64;
/// A session id (`ses_…`, 30 characters in opencode) is at most this long.
pub const MAX_SESSION_CHARS: usize = 256;
/// §4.1 log compaction keeps an inactive fact this long after it was retired…
const INACTIVE_KEPT_MS: i64 = 90 * 86_400_000;
/// …and at most this many of them (the newest), so a compacted log is bounded.
const INACTIVE_KEPT: usize = MAX_ACTIVE_FACTS;
/// §5.2: the handoff's token target ceiling (`ceil(chars/4)`).
const HANDOFF_MAX_TOKENS: usize = 900;
/// §7.1: `lastError.message` is cut to this.
const LAST_ERROR_CHARS: usize = 200;

/// One workspace's store.
#[derive(Clone, Debug)]
pub struct Store {
    pub(crate) workspace: PathBuf,
    root: PathBuf,
    redactor: Redactor,
    lock_wait: Duration,
    clock: Clock,
    sync: bool,
    /// The size `facts.jsonl` must pass before compaction is considered again: twice its
    /// compacted size at the last look. Until then a write costs no read of the log, so a
    /// long-lived writer appending thousands of records stays linear.
    compaction_check_at: Arc<AtomicU64>,
}

/// What `remember` did: the fact stored (or found), the facts the cap retired for it, and
/// a warning when the write succeeded but the log's compaction did not.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Remembered {
    /// What became of the text.
    #[serde(flatten)]
    pub stored: Stored,
    /// Active facts retired to keep at most 200 active (§4.4, `MAX_ACTIVE_FACTS`): the oldest
    /// compaction facts first, then the oldest explicit ones. Absent when none was.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evicted: Vec<Evicted>,
    /// The fact is stored, but rewriting `facts.jsonl` smaller (§4.1) failed (a full disk…);
    /// the next write tries again. Absent when nothing failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// What became of a text given to `remember`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "result", rename_all = "kebab-case")]
pub enum Stored {
    /// A new fact was stored.
    Added {
        /// The new fact's id (`fct_…`).
        id: String,
    },
    /// The same normalised text is already an active fact: nothing written (§4.3).
    Duplicate {
        /// The id of the fact already stored.
        id: String,
    },
    /// A near duplicate of the same scope was retired in favour of the new fact.
    Superseded {
        /// The new fact's id.
        id: String,
        /// The id of the fact it retired.
        old: String,
    },
}

/// A fact retired to make room (§4.4).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Evicted {
    /// Its id (`fct_…`).
    pub id: String,
    /// Its text, as stored (redacted).
    pub text: String,
}

impl Remembered {
    pub fn id(&self) -> &str {
        match &self.stored {
            Stored::Added { id } | Stored::Duplicate { id } | Stored::Superseded { id, .. } => id,
        }
    }
}

/// A settled tool call's outcome (§7.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    Error,
}

impl Store {
    /// The store of the workspace at `workspace` (absolute). `env` feeds the redactor's
    /// `env_value` rule.
    pub fn new(workspace: &Path, env: &BTreeMap<String, String>) -> Self {
        Store {
            workspace: workspace.to_path_buf(),
            root: workspace.join(".opencode").join("memory"),
            redactor: Redactor::new(env),
            lock_wait: LOCK_WAIT,
            clock: system_clock,
            sync: true,
            compaction_check_at: Arc::new(AtomicU64::new(0)),
        }
    }

    #[must_use]
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    #[must_use]
    pub fn with_lock_wait(mut self, wait: Duration) -> Self {
        self.lock_wait = wait;
        self
    }

    /// Whether each append is `fsync`ed before it returns (the default). Off, an append
    /// is still one whole line under the lock, and survives a crash of the writing
    /// process, but not of the machine; for bulk loads.
    #[must_use]
    pub fn with_sync(mut self, sync: bool) -> Self {
        self.sync = sync;
        self
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    fn path(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    pub(crate) fn now(&self) -> i64 {
        (self.clock)()
    }

    pub(crate) fn locked<T>(&self, write: impl FnOnce() -> Result<T, StoreError>) -> Result<T, StoreError> {
        files::with_lock(&self.workspace, &self.root, self.lock_wait, write)
    }

    /// Redacts `text`; refuses it when it is mostly secret (§8 post-rule).
    pub fn redact(&self, text: &str) -> Result<String, StoreError> {
        let redacted = self.redactor.redact(text);
        if redacted.mostly_secret(text) {
            return Err(StoreError::MostlySecret { kinds: redacted.kinds.join(", ") });
        }
        Ok(redacted.text)
    }

    /// Every record written to the store passes here or through [`Store::write_json`]:
    /// each of its strings is redacted (ids, sessions, categories as well as texts), so no
    /// field stores a secret verbatim.
    fn redacted_json(&self, record: &impl serde::Serialize) -> Result<Value, StoreError> {
        let mut value = serde_json::to_value(record).map_err(|e| StoreError::Invalid(e.to_string()))?;
        self.redactor.redact_json(&mut value);
        Ok(value)
    }

    fn append(&self, name: &str, record: &impl serde::Serialize) -> Result<(), StoreError> {
        self.append_all(name, std::slice::from_ref(record))
    }

    /// Appends every record in one write: all of them are stored, or none.
    fn append_all<R: serde::Serialize>(&self, name: &str, records: &[R]) -> Result<(), StoreError> {
        let lines =
            records.iter().map(|r| Ok(self.redacted_json(r)?.to_string())).collect::<Result<Vec<_>, _>>()?;
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        files::append_lines(&self.workspace, &self.path(name), &lines, self.sync)
    }

    /// Replaces the JSON file `name` with `record`, redacted.
    pub(crate) fn write_json(&self, name: &str, record: &impl serde::Serialize) -> Result<(), StoreError> {
        let bytes = serde_json::to_vec_pretty(&self.redacted_json(record)?)
            .map_err(|e| StoreError::Invalid(e.to_string()))?;
        files::replace_file(&self.workspace, &self.path(name), &bytes)
    }

    /// The folded facts, read fresh.
    pub fn facts(&self) -> Result<Vec<Fact>, StoreError> {
        Ok(record::fold_facts(self.fact_lines()?.records))
    }

    /// `facts.jsonl` as its reader sees it: the records, and every line it skipped.
    pub fn fact_lines(&self) -> Result<record::Parsed<FactLine>, StoreError> {
        let bytes = files::read_bytes(&self.path(record::FACTS))?.unwrap_or_default();
        Ok(record::parse_jsonl::<FactLine>(&bytes))
    }

    /// §4.1 log compaction, under the lock after every write of `facts.jsonl`: once the log
    /// has more than twice as many lines as its compacted form (and more than twice the
    /// active maximum), it is rewritten (temp file, rename) to the current state of every
    /// fact: the active ones, and the inactive ones retired within 90 days (at most
    /// [`INACTIVE_KEPT`], the newest), each with its status. Lines that were not records go.
    /// Measured against the compacted size, a log that cannot shrink much is not rewritten
    /// on every write.
    fn compact_facts_if_due(&self) -> Result<(), StoreError> {
        let path = self.path(record::FACTS);
        let len = std::fs::metadata(&path).map_or(0, |m| m.len());
        if len <= self.compaction_check_at.load(Ordering::Relaxed) {
            return Ok(());
        }
        let Some(bytes) = files::read_bytes(&path)? else { return Ok(()) };
        let lines = bytes.split(|&b| b == b'\n').filter(|line| !line.is_empty()).count();
        if lines <= 2 * MAX_ACTIVE_FACTS {
            return Ok(());
        }
        let kept = self.compacted(record::fold_facts(record::parse_jsonl::<FactLine>(&bytes).records));
        let mut text = String::new();
        for line in &kept {
            text.push_str(&self.redacted_json(line)?.to_string());
            text.push('\n');
        }
        self.compaction_check_at.store(2 * text.len() as u64, Ordering::Relaxed);
        if lines > 2 * kept.len() {
            files::replace_file(&self.workspace, &path, text.as_bytes())?;
        }
        Ok(())
    }

    /// The lines a compacted `facts.jsonl` holds, in the facts' order.
    fn compacted(&self, facts: Vec<Fact>) -> Vec<FactLine> {
        let now = self.now();
        let mut retired: Vec<&Fact> =
            facts.iter().filter(|f| !f.is_active() && now - f.status_at <= INACTIVE_KEPT_MS).collect();
        retired.sort_by_key(|f| std::cmp::Reverse((f.status_at, f.record.id.clone())));
        retired.truncate(INACTIVE_KEPT);
        let retired: std::collections::BTreeSet<&str> =
            retired.iter().map(|f| f.record.id.as_str()).collect();
        let mut lines = Vec::new();
        for fact in &facts {
            if fact.is_active() {
                lines.push(FactLine::Fact(fact.record.clone()));
            } else if retired.contains(fact.record.id.as_str()) {
                lines.push(FactLine::Fact(fact.record.clone()));
                lines.push(FactLine::Status(StatusRecord {
                    v: SCHEMA_VERSION,
                    id: fact.record.id.clone(),
                    status: Status::Inactive,
                    reason: fact.reason.clone().unwrap_or_default(),
                    session_id: None,
                    at: fact.status_at,
                }));
            }
        }
        lines
    }

    /// §4.2 explicit remember / compaction facts, with §4.3 dedupe and §4.4 caps.
    pub fn remember(
        &self,
        text: &str,
        scope: Scope,
        category: &str,
        source: FactSource,
        session: Option<&str>,
    ) -> Result<Remembered, StoreError> {
        check_label("category", category, MAX_CATEGORY_CHARS)?;
        check_session(session)?;
        let text = self.redact(text.trim())?;
        if text.is_empty() {
            return Err(StoreError::Invalid("nothing to remember: the text is empty".to_owned()));
        }
        if text.chars().count() > MAX_FACT_CHARS {
            return Err(StoreError::Invalid(format!(
                "a fact is at most {MAX_FACT_CHARS} characters (this one has {}); split it into atomic facts",
                text.chars().count()
            )));
        }
        let hash = text::hash(&text::normalize(&text, Some(&self.workspace)));
        self.locked(|| {
            let facts = self.facts()?;
            let active: Vec<&Fact> = facts.iter().filter(|f| f.is_active()).collect();
            if let Some(same) = active.iter().find(|f| f.record.hash == hash) {
                return Ok(Remembered {
                    stored: Stored::Duplicate { id: same.record.id.clone() },
                    evicted: Vec::new(),
                    warning: None,
                });
            }
            let now = self.now();
            let id = text::new_id("fct_", now);
            let tokens = text::token_set(&text);
            let near = active
                .iter()
                .filter(|f| f.record.scope == scope)
                .find(|f| text::jaccard(&text::token_set(&f.record.text), &tokens) >= NEAR_DUPLICATE)
                .map(|f| f.record.id.clone());
            let record = FactRecord {
                v: SCHEMA_VERSION,
                id: id.clone(),
                text: text.clone(),
                scope,
                category: category.to_owned(),
                source,
                status: Status::Active,
                session_id: session.map(str::to_owned),
                hash: hash.clone(),
                created_at: now,
                updated_at: now,
            };
            let evicted = evict_over_cap(&facts, near.as_deref());
            // The fact and the retirements it causes in one write: a full disk stores none
            // of them, so a caller that retries after an error stores the fact once.
            let mut lines = vec![FactLine::Fact(record)];
            let retired = near.iter().map(|old| (old, "superseded"));
            let retired = retired.chain(evicted.iter().map(|fact| (&fact.id, "evicted")));
            lines.extend(retired.map(|(id, reason)| {
                FactLine::Status(status_record(id, Status::Inactive, reason, session, now))
            }));
            self.append_all(record::FACTS, &lines)?;
            Ok(Remembered {
                stored: match near {
                    Some(old) => Stored::Superseded { id, old },
                    None => Stored::Added { id },
                },
                evicted,
                warning: self.compact_after_write(),
            })
        })
    }

    /// Compaction after a write that succeeded: best effort. The write is done and
    /// stays done; a compaction that fails (no room for the rewritten log) leaves the log
    /// as it is, complete, and is tried again after the next write. Returns what failed.
    fn compact_after_write(&self) -> Option<String> {
        self.compact_facts_if_due().err().map(|err| {
            format!(
                "the fact is stored, but compacting facts.jsonl failed ({err}); the next write tries again"
            )
        })
    }

    fn append_status(
        &self,
        id: &str,
        status: Status,
        reason: &str,
        session: Option<&str>,
        at: i64,
    ) -> Result<(), StoreError> {
        self.append(record::FACTS, &FactLine::Status(status_record(id, status, reason, session, at)))
    }

    /// Appends a fact as given, without dedupe or caps (imports, and extractors that did
    /// their own dedupe). Its text is redacted and its hash recomputed.
    pub fn append_fact(&self, mut record: FactRecord) -> Result<FactRecord, StoreError> {
        record.text = self.redact(&record.text)?;
        record.hash = text::hash(&text::normalize(&record.text, Some(&self.workspace)));
        record.v = SCHEMA_VERSION;
        if record.id.is_empty() {
            record.id = text::new_id("fct_", self.now());
        }
        check_label("category", &record.category, MAX_CATEGORY_CHARS)?;
        check_session(record.session_id.as_deref())?;
        self.locked(|| {
            self.append(record::FACTS, &FactLine::Fact(record.clone()))?;
            // Stored: a compaction that fails is tried again after the next write.
            let _ = self.compact_after_write();
            Ok(())
        })?;
        Ok(record)
    }

    /// `setFactStatus` (§4.1): appends a status record; re-activation is allowed.
    pub fn set_fact_status(
        &self,
        id: &str,
        status: Status,
        reason: &str,
        session: Option<&str>,
    ) -> Result<(), StoreError> {
        check_session(session)?;
        self.locked(|| {
            if !self.facts()?.iter().any(|f| f.record.id == id) {
                return Err(StoreError::NoMatch(self.redactor.redact(id).text));
            }
            self.append_status(id, status, reason, session, self.now())?;
            // Written: a compaction that fails is tried again after the next write.
            let _ = self.compact_after_write();
            Ok(())
        })
    }

    /// §4.2 forget: `target` is a fact id, or text whose best-matching active fact is
    /// retired when it scores at least half of the text's own score. Returns the ids.
    pub fn forget(&self, target: &str, session: Option<&str>) -> Result<Vec<String>, StoreError> {
        check_session(session)?;
        let forgotten = self.locked(|| {
            let facts = self.facts()?;
            let now = self.now();
            if let Some(fact) = facts.iter().find(|f| f.record.id == target.trim()) {
                if fact.is_active() {
                    self.append_status(&fact.record.id, Status::Inactive, "user-forget", session, now)?;
                    return Ok(vec![fact.record.id.clone()]);
                }
                return Ok(Vec::new());
            }
            let id = best_match(&facts, target)
                .ok_or_else(|| StoreError::NoMatch(self.redactor.redact(target).text))?;
            self.append_status(&id, Status::Inactive, "user-forget", session, now)?;
            Ok(vec![id])
        })?;
        if !forgotten.is_empty() {
            // Retired: a compaction that fails is tried again after the next write.
            self.locked(|| Ok(self.compact_after_write()))?;
        }
        Ok(forgotten)
    }

    /// §5.2: replaces the handoff with `json` (a handoff object; `v` may be left out),
    /// redacted, stamped, and trimmed to the 900-token ceiling.
    pub fn set_handoff(&self, json: &str, session: Option<&str>) -> Result<Handoff, StoreError> {
        check_session(session)?;
        let mut value: Value = serde_json::from_str(json).map_err(|e| {
            StoreError::Invalid(format!("handoff: not JSON at line {} column {}: {e}", e.line(), e.column()))
        })?;
        let Value::Object(map) = &mut value else {
            return Err(StoreError::Invalid("handoff: expected a JSON object".to_owned()));
        };
        map.entry("v").or_insert(Value::from(SCHEMA_VERSION));
        map.insert("updatedAt".to_owned(), Value::from(self.now()));
        if let Some(session) = session {
            map.insert("sessionID".to_owned(), Value::from(session));
        }
        self.redactor.redact_json(&mut value);
        let text = serde_json::to_string(&value).map_err(|e| StoreError::Invalid(e.to_string()))?;
        let mut handoff: Handoff =
            record::parse_record(&text).map_err(|e| StoreError::Invalid(format!("handoff: {e}")))?;
        if handoff.source.is_empty() {
            "manual".clone_into(&mut handoff.source);
        }
        trim_handoff(&mut handoff);
        self.locked(|| self.write_json(record::HANDOFF, &handoff))?;
        Ok(handoff)
    }

    pub fn handoff(&self) -> Result<Option<Handoff>, StoreError> {
        self.read_json(record::HANDOFF)
    }

    fn read_json<T: serde::de::DeserializeOwned>(&self, name: &str) -> Result<Option<T>, StoreError> {
        let path = self.path(name);
        match files::read_text(&path)? {
            None => Ok(None),
            Some(text) => {
                record::parse_record(&text).map(Some).map_err(|reason| StoreError::Corrupt { path, reason })
            }
        }
    }

    /// `recordToolOutcome` (§7.1): read-modify-write of `tool_stats.json`, all under the
    /// lock so concurrent outcomes never lose an increment. `kind` defaults to the
    /// classification of `message`.
    pub fn record_tool_outcome(
        &self,
        tool: &str,
        outcome: Outcome,
        kind: Option<&str>,
        message: Option<&str>,
    ) -> Result<ToolStat, StoreError> {
        if tool.trim().is_empty() {
            return Err(StoreError::Invalid("the tool name is empty".to_owned()));
        }
        check_label("tool name", tool, MAX_CATEGORY_CHARS)?;
        // The tool's name is a key of `tools`, which the record's redaction leaves alone.
        let tool = self.redactor.redact(tool).text;
        let tool = tool.as_str();
        self.locked(|| {
            let now = self.now();
            let mut stats: ToolStats = self.read_json(record::TOOL_STATS)?.unwrap_or_default();
            stats.v = SCHEMA_VERSION;
            stats.updated_at = now;
            let stat = stats.tools.entry(tool.to_owned()).or_default();
            stat.calls += 1;
            let mark = match outcome {
                Outcome::Ok => {
                    stat.consecutive_errors = 0;
                    stat.last_success_at = Some(now);
                    's'
                }
                Outcome::Error => {
                    let kind =
                        kind.map_or_else(|| classify_error(message.unwrap_or("")).to_owned(), str::to_owned);
                    *stat.error_kinds.entry(kind.clone()).or_default() += 1;
                    if let Some(message) = message {
                        let redacted = self.redactor.redact(message).text;
                        let cut: String = redacted.chars().take(LAST_ERROR_CHARS).collect();
                        stat.last_error = Some(LastError { message: cut, at: now });
                    }
                    // A user's permission rejection is not a tool failure (§7.1).
                    if kind == "permission" {
                        'p'
                    } else {
                        stat.errors += 1;
                        stat.consecutive_errors += 1;
                        stat.last_error_at = Some(now);
                        'e'
                    }
                }
            };
            stat.recent.push(mark);
            let extra = stat.recent.chars().count().saturating_sub(RECENT_WINDOW);
            stat.recent = stat.recent.chars().skip(extra).collect();
            let result = stat.clone();
            self.write_json(record::TOOL_STATS, &stats)?;
            Ok(result)
        })
    }

    /// Appends a session card (§9.2), redacted. Sub-agent sessions get none.
    pub fn add_session_card(&self, mut card: SessionCard) -> Result<SessionCard, StoreError> {
        if card.parent_id.is_some() {
            return Err(StoreError::Invalid(format!(
                "session {} is a sub-agent session (it has a parent); sub-agent sessions get no card",
                card.session_id
            )));
        }
        let value = self.redacted_json(&card)?;
        card = serde_json::from_value(value).map_err(|e| StoreError::Invalid(e.to_string()))?;
        card.v = SCHEMA_VERSION;
        card.id = text::new_id("crd_", self.now());
        self.locked(|| self.append(record::SESSIONS, &card))?;
        Ok(card)
    }

    /// Appends observation records (used by [`extract::observe`]).
    fn append_observations(&self, observations: &[record::Observation]) -> Result<(), StoreError> {
        for observation in observations {
            self.append(record::OBSERVATIONS, observation)?;
        }
        Ok(())
    }
}

/// §4.4: the facts to retire so that the active ones, the new fact among them, are at
/// most [`MAX_ACTIVE_FACTS`]: the oldest compaction facts, then the oldest explicit ones.
/// `before` is the state before the new fact; `retired` a fact it supersedes.
fn evict_over_cap(before: &[Fact], retired: Option<&str>) -> Vec<Evicted> {
    let mut active: Vec<&Fact> =
        before.iter().filter(|f| f.is_active() && Some(f.record.id.as_str()) != retired).collect();
    let count = active.len() + 1;
    if count <= MAX_ACTIVE_FACTS {
        return Vec::new();
    }
    active
        .sort_by_key(|f| (f.record.source == FactSource::Explicit, f.record.updated_at, f.record.id.clone()));
    active
        .into_iter()
        .take(count - MAX_ACTIVE_FACTS)
        .map(|f| Evicted { id: f.record.id.clone(), text: f.record.text.clone() })
        .collect()
}

fn status_record(id: &str, status: Status, reason: &str, session: Option<&str>, at: i64) -> StatusRecord {
    StatusRecord {
        v: SCHEMA_VERSION,
        id: id.to_owned(),
        status,
        reason: reason.to_owned(),
        session_id: session.map(str::to_owned),
        at,
    }
}

/// The active fact that best matches `query`, if it scores at least half of the query's
/// own score (§4.2 forget without a model).
pub fn best_match(facts: &[Fact], query: &str) -> Option<String> {
    // The request's own verbs ("forget", "stop remembering") say what to do, not which fact.
    const VERBS: &[&str] =
        &["forget", "remember", "remembering", "memory", "delete", "stop", "longer", "true"];
    let query: Vec<String> =
        tokenize::tokens(query).into_iter().filter(|t| !VERBS.contains(&t.as_str())).collect();
    let query = query.join(" ");
    let query = query.as_str();
    let active: Vec<&Fact> = facts.iter().filter(|f| f.is_active()).collect();
    let mut docs: Vec<Doc<'_>> = active
        .iter()
        .map(|f| Doc { id: &f.record.id, text: f.record.text.clone(), files: &[], time: 0, decays: false })
        .collect();
    // The query ranked among the facts gives its self-score on the same scale.
    docs.push(Doc { id: "\u{10FFFF}query", text: query.to_owned(), files: &[], time: 0, decays: false });
    let ranking = rank(query, &docs, 0);
    let own = ranking.kept.iter().find(|(i, _)| *i == active.len()).and_then(|(_, s)| *s)?.0;
    let (best, score) = ranking.kept.iter().find(|(i, _)| *i < active.len())?;
    let score = score.map(|s| s.0)?;
    (score >= 0.5 * own).then(|| active[*best].record.id.clone())
}

/// §7.1's error kinds, by substring of the lower-cased message.
pub fn classify_error(message: &str) -> &'static str {
    let m = message.to_lowercase();
    let any = |needles: &[&str]| needles.iter().any(|n| m.contains(n));
    if any(&["timed out", "timeout", "etimedout"]) {
        "timeout"
    } else if any(&["not found", "enoent", "no such file", "does not exist"]) {
        "not_found"
    } else if any(&["eacces", "permission denied", "rejected by user", "rejected"]) {
        "permission"
    } else if any(&["invalid", "schema", "expected", "required"]) {
        "invalid_args"
    } else {
        "other"
    }
}

/// A label (a category, a tool's name) is short: a longer one is refused, not cut.
fn check_label(what: &str, value: &str, max: usize) -> Result<(), StoreError> {
    let chars = value.chars().count();
    if chars > max {
        return Err(StoreError::Invalid(format!(
            "a {what} is at most {max} characters (this one has {chars})"
        )));
    }
    Ok(())
}

/// A session id is at most [`MAX_SESSION_CHARS`] characters.
pub(crate) fn check_session(session: Option<&str>) -> Result<(), StoreError> {
    session.map_or(Ok(()), |s| check_label("session id", s, MAX_SESSION_CHARS))
}

fn handoff_tokens(handoff: &Handoff) -> usize {
    serde_json::to_string(handoff).map_or(0, |s| s.chars().count().div_ceil(4))
}

/// §5.2: over 900 tokens, trim list fields from the end in the order `openQuestions,
/// constraints, decisions, done, files`, each to at least one item.
fn trim_handoff(handoff: &mut Handoff) {
    let order: [fn(&mut Handoff) -> &mut Vec<String>; 5] = [
        |h| &mut h.open_questions,
        |h| &mut h.constraints,
        |h| &mut h.decisions,
        |h| &mut h.done,
        |h| &mut h.files,
    ];
    for field in order {
        while handoff_tokens(handoff) > HANDOFF_MAX_TOKENS && field(handoff).len() > 1 {
            field(handoff).pop();
        }
    }
    handoff.token_estimate = None;
    handoff.token_estimate = Some(handoff_tokens(handoff) as u64);
}

#[cfg(test)]
mod tests;
