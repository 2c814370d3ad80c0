//! Workspace memory (docs/memory.md): the store's files as inputs, recall as queries.
//!
//! Each of the store's files is read through its own [`File`](ctxgraph_db::files::File) input
//! and parsed by its own query; each block is a query over the files it needs; the
//! assembly clamps the blocks. An edit to `facts.jsonl` therefore re-runs the facts parse,
//! the facts block and the assembly, and nothing else. Writing the store is the job of
//! `ctxgraph-memory`'s `Store`; this module only reads.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::rank::{Doc, RankCut, Ranking, rank};
use crate::record::{
    Fact, FactLine, FactSource, Handoff, Note, Observation, SessionCard, Skipped, ToolStat, ToolStats,
};
use crate::render::{BlockId, Cut, CutReason, Draft, Item, MemoryContext, assemble, cut_at_word, sanitize};
use crate::{record, render, tokenize};
use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::files::{ReadFailure, file_bytes};

/// §3: the store lives under `<workspace>/.opencode/memory/`.
pub fn memory_root(db: &dyn Db, ws: Workspace) -> PathBuf {
    ws.cwd(db).join(".opencode").join("memory")
}

/// One recall's parameters (§11.1, §12).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Recall {
    /// Free text; empty means "session start" (§10 "No query").
    pub query: String,
    /// Epoch milliseconds that ages are measured from.
    pub now: i64,
    /// Characters the whole `<memory>` part may take (§11.1 `maxTotalChars`).
    pub max_chars: usize,
    /// The current session: its own card is excluded, its handoff always eligible.
    pub session_id: Option<String>,
    /// The agent's tools; `None` means every tool (lessons filter on it, §7.2).
    pub tools: Option<Vec<String>>,
    /// Caps items per ranked block (`memory_recall`'s `limit`).
    pub limit: Option<usize>,
    /// Render every observation with its `l1` detail (`memory_recall`, §12).
    pub detail: bool,
}

impl Recall {
    /// A recall of `query` at `now`, with the default budget and nothing else set.
    pub fn new(query: impl Into<String>, now: i64) -> Self {
        Recall {
            query: query.into(),
            now,
            max_chars: render::DEFAULT_MAX_CHARS,
            session_id: None,
            tools: None,
            limit: None,
            detail: false,
        }
    }

    /// What `memory_recall` (§12) and `ctxgraph memory recall` ask at `now`: `query`, every
    /// observation with its detail, within `budget` characters, else the configured
    /// `memory.maxTotalChars`, else the default; at most `limit` items per ranked block.
    pub fn on_request(
        query: impl Into<String>,
        now: i64,
        settings: &MemorySettings,
        budget: Option<usize>,
        limit: Option<usize>,
        session_id: Option<String>,
    ) -> Self {
        Recall {
            max_chars: budget.or(settings.max_chars).unwrap_or(render::DEFAULT_MAX_CHARS),
            detail: true,
            limit,
            session_id,
            ..Recall::new(query, now)
        }
    }
}

/// What a reader made of one store file: its records, the lines it skipped, or why the
/// file could not be read at all.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Loaded<T> {
    /// What was read.
    pub value: T,
    /// Lines (or the whole file, as line 1) that could not be read, and why.
    pub skipped: Vec<Skipped>,
    /// Why the file could not be read (a directory, a FIFO, over the size limit, no
    /// permission): recall refuses to answer rather than answer from an empty store.
    pub unreadable: Option<String>,
}

/// A store file's bytes; empty when it does not exist (a new store), an error when it
/// exists but cannot be read.
fn read_store_file(db: &dyn Db, ws: Workspace, name: &str) -> Result<Arc<[u8]>, String> {
    let file = db.files().get(db, &memory_root(db, ws).join(name));
    match file_bytes(db, file) {
        Ok(bytes) => Ok(bytes.clone()),
        Err(ReadFailure::NotFound) => Ok(Arc::from([])),
        Err(failure) => Err(failure.to_string()),
    }
}

/// Every record of a JSONL store file, and the lines skipped.
fn read_jsonl<T: serde::de::DeserializeOwned>(db: &dyn Db, ws: Workspace, name: &str) -> Loaded<Vec<T>> {
    match read_store_file(db, ws, name) {
        Ok(bytes) => {
            let parsed = record::parse_jsonl::<T>(&bytes);
            Loaded { value: parsed.records, skipped: parsed.skipped, unreadable: None }
        }
        Err(reason) => Loaded { value: Vec::new(), skipped: Vec::new(), unreadable: Some(reason) },
    }
}

/// `facts.jsonl`, folded (§4.1).
#[salsa::tracked(returns(ref))]
pub fn fact_log(db: &dyn Db, ws: Workspace) -> Loaded<Vec<Fact>> {
    let Loaded { value, skipped, unreadable } = read_jsonl::<FactLine>(db, ws, record::FACTS);
    Loaded { value: record::fold_facts(value), skipped, unreadable }
}

/// `observations.jsonl`, every readable record in file order (§6.1).
#[salsa::tracked(returns(ref))]
pub fn observation_log(db: &dyn Db, ws: Workspace) -> Loaded<Vec<Observation>> {
    read_jsonl(db, ws, record::OBSERVATIONS)
}

/// `sessions.jsonl`: the latest card per session (§9.2), in file order of that card.
#[salsa::tracked(returns(ref))]
pub fn session_log(db: &dyn Db, ws: Workspace) -> Loaded<Vec<SessionCard>> {
    let Loaded { value, skipped, unreadable } = read_jsonl::<SessionCard>(db, ws, record::SESSIONS);
    let mut latest: Vec<SessionCard> = Vec::new();
    for card in value {
        latest.retain(|c| c.session_id != card.session_id);
        latest.push(card);
    }
    Loaded { value: latest, skipped, unreadable }
}

fn read_json<T: serde::de::DeserializeOwned + Default>(
    db: &dyn Db,
    ws: Workspace,
    name: &str,
) -> Loaded<Option<T>> {
    let bytes = match read_store_file(db, ws, name) {
        Ok(bytes) if bytes.is_empty() => return Loaded::default(),
        Ok(bytes) => bytes,
        Err(reason) => return Loaded { unreadable: Some(reason), ..Loaded::default() },
    };
    let parsed = std::str::from_utf8(&bytes)
        .map_err(|e| format!("not UTF-8 at byte {}", e.valid_up_to()))
        .and_then(record::parse_record::<T>);
    match parsed {
        Ok(value) => Loaded { value: Some(value), ..Loaded::default() },
        Err(reason) => Loaded { skipped: vec![Skipped { line: 1, reason }], ..Loaded::default() },
    }
}

/// `handoff.json` (§5.1); `None` when it is missing or unreadable.
#[salsa::tracked(returns(ref))]
pub fn handoff_doc(db: &dyn Db, ws: Workspace) -> Loaded<Option<Handoff>> {
    read_json(db, ws, record::HANDOFF)
}

/// `tool_stats.json` (§7.1); `None` when it is missing or unreadable.
#[salsa::tracked(returns(ref))]
pub fn tool_stats_doc(db: &dyn Db, ws: Workspace) -> Loaded<Option<ToolStats>> {
    read_json(db, ws, record::TOOL_STATS)
}

/// §11.2 item caps.
const FACT_ITEMS: usize = 20;
const OBSERVATION_ITEMS: usize = 8;
const OBSERVATIONS_WITH_DETAIL: usize = 2;
const LESSON_ITEMS: usize = 5;
const SESSION_ITEMS: usize = 3;
const FACT_CHARS: usize = 300;
const LESSON_CHARS: usize = 200;
const SESSION_CHARS: usize = 500;
const DAY_MS: i64 = 86_400_000;
/// §5.3: another session's handoff is shown for 72 hours.
const HANDOFF_MAX_AGE_MS: i64 = 72 * 3_600_000;

/// Turns a ranking into items (capped) and cuts.
fn ranked_items(
    ranking: &Ranking,
    ids: &[&str],
    cap: usize,
    mut line: impl FnMut(usize, usize) -> Item,
) -> (Vec<Item>, Vec<Cut>) {
    let mut items = Vec::new();
    let mut cut = Vec::new();
    for (position, &(index, score)) in ranking.kept.iter().enumerate() {
        if position < cap {
            items.push(Item { score, ..line(index, position) });
        } else {
            cut.push(Cut { id: ids[index].to_owned(), score, reason: CutReason::ItemCap { cap } });
        }
    }
    for &(index, why, score) in &ranking.cut {
        let reason = match why {
            RankCut::NoMatch => CutReason::NoMatch,
            RankCut::BelowFloor => CutReason::BelowFloor,
        };
        cut.push(Cut { id: ids[index].to_owned(), score: Some(score), reason });
    }
    (items, cut)
}

/// Block 1, "Remembered User/Project Facts" (§4, §11.2).
#[salsa::tracked(returns(ref))]
pub fn facts_block(db: &dyn Db, ws: Workspace, recall: Recall) -> Draft {
    let facts = &fact_log(db, ws).value;
    let mut cut = Vec::new();
    let mut active: Vec<&Fact> = Vec::new();
    for fact in facts {
        if fact.is_active() {
            active.push(fact);
        } else {
            let why = fact.reason.clone().unwrap_or_default();
            cut.push(Cut { id: fact.record.id.clone(), score: None, reason: CutReason::Inactive { why } });
        }
    }
    // §10 "No query": explicit facts first, then the most recently updated.
    if tokenize::query_tokens(&recall.query).is_empty() {
        active.sort_by(|a, b| {
            let explicit = |f: &Fact| f.record.source == FactSource::Explicit;
            explicit(b)
                .cmp(&explicit(a))
                .then(b.record.updated_at.cmp(&a.record.updated_at))
                .then(a.record.id.cmp(&b.record.id))
        });
    }
    let docs: Vec<Doc<'_>> = active
        .iter()
        .map(|f| Doc {
            id: &f.record.id,
            text: f.record.text.clone(),
            files: &[],
            time: f.record.updated_at,
            decays: f.record.source != FactSource::Explicit,
        })
        .collect();
    let ranking = if tokenize::query_tokens(&recall.query).is_empty() {
        Ranking { kept: (0..docs.len()).map(|i| (i, None)).collect(), cut: Vec::new() }
    } else {
        rank(&recall.query, &docs, recall.now)
    };
    let ids: Vec<&str> = docs.iter().map(|d| d.id).collect();
    let cap = recall.limit.unwrap_or(FACT_ITEMS).min(FACT_ITEMS);
    let (items, ranked_cut) = ranked_items(&ranking, &ids, cap, |i, _| {
        let fact = &active[i].record;
        let line = format!("- [{}] {}", fact.scope.as_str(), sanitize(&fact.text));
        Item {
            id: fact.id.clone(),
            score: None,
            line: cut_at_word(&line, FACT_CHARS),
            short: None,
            drop_rank: 0,
        }
    });
    cut.extend(ranked_cut);
    Draft { id: BlockId::Facts, title: "Remembered User/Project Facts".to_owned(), items, cut }
}

/// Block 2, the handoff (§5.3 eligibility, §11.3 layout, §11.4 section cut order).
#[salsa::tracked(returns(ref))]
pub fn handoff_block(db: &dyn Db, ws: Workspace, recall: Recall) -> Draft {
    let mut draft = Draft {
        id: BlockId::Handoff,
        title: "Current Task Handoff".to_owned(),
        items: Vec::new(),
        cut: Vec::new(),
    };
    let Some(handoff) = &handoff_doc(db, ws).value else { return draft };
    let same_session = handoff.session_id.is_some() && handoff.session_id == recall.session_id;
    if !same_session {
        let not_eligible = |why: &str| Cut {
            id: "handoff".to_owned(),
            score: None,
            reason: CutReason::NotEligible { why: why.to_owned() },
        };
        if handoff.status == "done" {
            draft.cut.push(not_eligible("an earlier session's handoff whose status is done"));
            return draft;
        }
        if recall.now - handoff.updated_at > HANDOFF_MAX_AGE_MS {
            draft.cut.push(not_eligible("an earlier session's handoff older than 72 hours"));
            return draft;
        }
        "Previous Task Handoff (from an earlier session)".clone_into(&mut draft.title);
    }
    let list = |items: &[String], sep: &str| items.iter().map(|s| sanitize(s)).collect::<Vec<_>>().join(sep);
    let numbered = |items: &[String]| {
        items
            .iter()
            .enumerate()
            .map(|(i, s)| format!("{}) {}", i + 1, sanitize(s)))
            .collect::<Vec<_>>()
            .join(" ")
    };
    // (section, text, drop rank): §11.4 cuts Open questions, Decisions, Done, Files first,
    // in that order; the rest go from the tail.
    let sections: [(&str, String, u8); 9] = [
        ("goal", sanitize(&handoff.goal), 9),
        ("status", sanitize(&handoff.status), 9),
        ("done", list(&handoff.done, "; "), 2),
        ("in-progress", list(&handoff.in_progress, "; "), 9),
        ("next", numbered(&handoff.next), 9),
        ("decisions", list(&handoff.decisions, "; "), 1),
        ("constraints", list(&handoff.constraints, "; "), 9),
        ("files", list(&handoff.files, ", "), 3),
        ("open-questions", list(&handoff.open_questions, "; "), 0),
    ];
    for (id, text, drop_rank) in sections {
        if text.is_empty() {
            continue;
        }
        let label = match id {
            "goal" => "Goal",
            "status" => "Status",
            "done" => "Done",
            "in-progress" => "In progress",
            "next" => "Next",
            "decisions" => "Decisions",
            "constraints" => "Constraints",
            "files" => "Files",
            _ => "Open questions",
        };
        draft.items.push(Item {
            id: id.to_owned(),
            score: None,
            line: format!("{label}: {text}"),
            short: None,
            drop_rank,
        });
    }
    draft
}

/// Block 3, "Relevant Observations" (§6, §11.2).
#[salsa::tracked(returns(ref))]
pub fn observations_block(db: &dyn Db, ws: Workspace, recall: Recall) -> Draft {
    let observations = &observation_log(db, ws).value;
    let docs: Vec<Doc<'_>> = observations
        .iter()
        .map(|o| Doc {
            id: &o.id,
            text: format!(
                "{} {} {} {} {}",
                o.note.l0,
                o.note.l1,
                o.note.keywords.join(" "),
                o.note.files.join(" "),
                o.tool
            ),
            files: &o.note.files,
            time: o.created_at,
            decays: true,
        })
        .collect();
    let ranking = rank(&recall.query, &docs, recall.now);
    let ids: Vec<&str> = docs.iter().map(|d| d.id).collect();
    let cap = recall.limit.unwrap_or(OBSERVATION_ITEMS).min(OBSERVATION_ITEMS);
    let (items, cut) = ranked_items(&ranking, &ids, cap, |i, position| {
        let o = &observations[i];
        let head = format!(
            "- ({}, {}) {}",
            sanitize(&o.tool),
            sanitize(&o.note.kind),
            cut_at_word(&sanitize(&o.note.l0), Note::L0_CHARS)
        );
        let with_detail = recall.detail || position < OBSERVATIONS_WITH_DETAIL;
        let (line, short) = if with_detail && !o.note.l1.trim().is_empty() {
            (format!("{head} — {}", cut_at_word(&sanitize(&o.note.l1), Note::L1_CHARS)), Some(head))
        } else {
            (head, None)
        };
        Item { id: o.id.clone(), score: None, line, short, drop_rank: 0 }
    });
    Draft { id: BlockId::Observations, title: "Relevant Observations".to_owned(), items, cut }
}

/// §7.2: the guidance line for a tool, when its recent window qualifies.
pub fn lesson(tool: &str, stat: &ToolStat) -> Option<(f64, usize, String)> {
    let window: Vec<char> = stat.recent.chars().filter(|c| *c == 's' || *c == 'e').collect();
    let calls = window.len();
    let errors = window.iter().filter(|c| **c == 'e').count();
    if calls < 5 || errors == 0 {
        return None;
    }
    let rate = crate::rank::count(errors) / crate::rank::count(calls);
    if rate < 0.30 && stat.consecutive_errors < 3 {
        return None;
    }
    let mostly = stat
        .error_kinds
        .iter()
        .filter(|(kind, _)| kind.as_str() != "permission")
        .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
        .map_or("other", |(kind, _)| kind.as_str());
    let family = match tool {
        "edit" | "write" | "patch" | "multiedit" => "edit",
        other => other,
    };
    let tip = match (family, mostly) {
        ("edit", "not_found") => "Re-read the file and copy the exact text before editing.".to_owned(),
        ("bash", "timeout") => {
            "Prefer shorter commands or raise the timeout; run long jobs in the background.".to_owned()
        }
        (_, "invalid_args") => "Check the parameter schema before calling.".to_owned(),
        _ => match &stat.last_error {
            Some(last) => format!("Last error: {}", cut_at_word(&sanitize(&last.message), 80)),
            None => "Check the inputs before calling it again.".to_owned(),
        },
    };
    let line = format!("- {}: {errors}/{calls} recent calls failed (mostly {mostly}). {tip}", sanitize(tool));
    Some((rate, errors, cut_at_word(&line, LESSON_CHARS)))
}

/// Block 4, "Tool Usage Lessons" (§7.2).
#[salsa::tracked(returns(ref))]
pub fn lessons_block(db: &dyn Db, ws: Workspace, recall: Recall) -> Draft {
    let mut draft = Draft {
        id: BlockId::Lessons,
        title: "Tool Usage Lessons".to_owned(),
        items: Vec::new(),
        cut: Vec::new(),
    };
    let Some(stats) = &tool_stats_doc(db, ws).value else { return draft };
    let mut lessons: Vec<(f64, usize, &str, String)> = Vec::new();
    for (tool, stat) in &stats.tools {
        if let Some(tools) = &recall.tools
            && !tools.contains(tool)
        {
            continue;
        }
        if let Some((rate, errors, line)) = lesson(tool, stat) {
            lessons.push((rate, errors, tool, line));
        }
    }
    lessons.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.cmp(b.2)));
    for (position, (_, _, tool, line)) in lessons.into_iter().enumerate() {
        if position < LESSON_ITEMS {
            draft.items.push(Item { id: tool.to_owned(), score: None, line, short: None, drop_rank: 0 });
        } else {
            draft.cut.push(Cut {
                id: tool.to_owned(),
                score: None,
                reason: CutReason::ItemCap { cap: LESSON_ITEMS },
            });
        }
    }
    draft
}

fn age(now: i64, then: i64) -> String {
    match (now - then).max(0) / DAY_MS {
        0 => "today".to_owned(),
        1 => "1 day ago".to_owned(),
        days => format!("{days} days ago"),
    }
}

/// Block 5, "Related Prior Sessions" (§9.3).
#[salsa::tracked(returns(ref))]
pub fn sessions_block(db: &dyn Db, ws: Workspace, recall: Recall) -> Draft {
    let cards = &session_log(db, ws).value;
    let mut cut = Vec::new();
    let mut candidates: Vec<&SessionCard> = Vec::new();
    for card in cards {
        let related = recall
            .session_id
            .as_ref()
            .is_some_and(|current| &card.session_id == current || card.parent_id.as_ref() == Some(current));
        if related {
            let why = "the current session or its sub-agent".to_owned();
            cut.push(Cut { id: card.id.clone(), score: None, reason: CutReason::NotEligible { why } });
        } else {
            candidates.push(card);
        }
    }
    let docs: Vec<Doc<'_>> = candidates
        .iter()
        .map(|c| Doc {
            id: &c.id,
            text: format!(
                "{} {} {} {} {}",
                c.title,
                c.goal,
                c.summary,
                c.keywords.join(" "),
                c.files.join(" ")
            ),
            files: &c.files,
            time: c.archived_at,
            decays: true,
        })
        .collect();
    let mut ranking = rank(&recall.query, &docs, recall.now);
    // §9.3: when nothing matches, the single most recent card.
    if ranking.kept.is_empty() && !docs.is_empty() {
        let newest =
            (0..docs.len()).max_by(|&a, &b| docs[a].time.cmp(&docs[b].time).then(docs[b].id.cmp(docs[a].id)));
        if let Some(newest) = newest {
            ranking.cut.retain(|(i, _, _)| *i != newest);
            ranking.kept.push((newest, None));
        }
    }
    let ids: Vec<&str> = docs.iter().map(|d| d.id).collect();
    let cap = recall.limit.unwrap_or(SESSION_ITEMS).min(SESSION_ITEMS);
    let (items, ranked_cut) = ranked_items(&ranking, &ids, cap, |i, _| {
        let c = candidates[i];
        let summary = if c.summary.is_empty() { &c.goal } else { &c.summary };
        let mut line = format!(
            "- \"{}\" ({}, {}): {}",
            sanitize(&c.title),
            age(recall.now, c.archived_at),
            sanitize(&c.outcome),
            sanitize(summary)
        );
        if !c.files.is_empty() {
            line.push_str(" Files: ");
            line.push_str(&sanitize(&c.files.join(", ")));
        }
        Item {
            id: c.id.clone(),
            score: None,
            line: cut_at_word(&line, SESSION_CHARS),
            short: None,
            drop_rank: 0,
        }
    });
    cut.extend(ranked_cut);
    Draft { id: BlockId::Sessions, title: "Related Prior Sessions".to_owned(), items, cut }
}

/// §11.1 `buildMemoryContextBlocks`: the five blocks, clamped to `recall.max_chars`.
#[salsa::tracked(returns(ref))]
pub fn memory_context(db: &dyn Db, ws: Workspace, recall: Recall) -> MemoryContext {
    let drafts = [
        facts_block(db, ws, recall.clone()).clone(),
        handoff_block(db, ws, recall.clone()).clone(),
        observations_block(db, ws, recall.clone()).clone(),
        lessons_block(db, ws, recall.clone()).clone(),
        sessions_block(db, ws, recall.clone()).clone(),
    ];
    assemble(&drafts, recall.max_chars)
}

/// ctxgraph's workspace-memory settings, read from the merged config by the profile that
/// owns it (opencode's `memory`, `memory_model`, `small_model`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct MemorySettings {
    /// `memory.enabled`: whether the memory blocks join the prompt (off unless set).
    pub enabled: bool,
    /// `memory.maxTotalChars` (default 9000).
    pub max_chars: Option<usize>,
    /// `memory_model`: the model ctxgraph asks to extract memories, when set.
    pub memory_model: Option<String>,
    /// opencode's `small_model`, the fallback for extraction.
    pub small_model: Option<String>,
}

/// The recall a build makes at session start: no query, ages measured from the start of
/// the host's day, the configured budget.
pub fn session_start_recall(db: &dyn Db, ws: Workspace, settings: &MemorySettings) -> Recall {
    let now = day_start_ms(ws.host(db).date(db)).unwrap_or(0);
    Recall { max_chars: settings.max_chars.unwrap_or(render::DEFAULT_MAX_CHARS), ..Recall::new("", now) }
}

/// Every store file as its reader loaded it: (name, skipped lines, why it is unreadable).
fn loaded_files(db: &dyn Db, ws: Workspace) -> [(&'static str, &[Skipped], Option<&String>); 5] {
    let facts = fact_log(db, ws);
    let observations = observation_log(db, ws);
    let sessions = session_log(db, ws);
    let handoff = handoff_doc(db, ws);
    let stats = tool_stats_doc(db, ws);
    [
        (record::FACTS, &facts.skipped, facts.unreadable.as_ref()),
        (record::OBSERVATIONS, &observations.skipped, observations.unreadable.as_ref()),
        (record::SESSIONS, &sessions.skipped, sessions.unreadable.as_ref()),
        (record::HANDOFF, &handoff.skipped, handoff.unreadable.as_ref()),
        (record::TOOL_STATS, &stats.skipped, stats.unreadable.as_ref()),
    ]
}

/// Lines every store file skipped, by file name (for `memory show` and explain).
pub fn skipped_lines(db: &dyn Db, ws: Workspace) -> BTreeMap<&'static str, Vec<Skipped>> {
    loaded_files(db, ws)
        .into_iter()
        .filter(|(_, skipped, _)| !skipped.is_empty())
        .map(|(name, skipped, _)| (name, skipped.to_vec()))
        .collect()
}

/// The first store file that exists but cannot be read (its path), and why.
pub fn unreadable_store_file(db: &dyn Db, ws: Workspace) -> Option<(PathBuf, String)> {
    loaded_files(db, ws)
        .into_iter()
        .find_map(|(name, _, unreadable)| Some((memory_root(db, ws).join(name), unreadable?.clone())))
}

/// Midnight UTC of a `Date.toDateString()` day (`Sun Nov 29 2026`), in epoch ms: the
/// clock a build's recall measures ages from, so a build depends on the day (the `Host`
/// input) and not on the wall clock.
pub fn day_start_ms(date: &str) -> Option<i64> {
    let mut parts = date.split_whitespace().skip(1);
    let month = match parts.next()? {
        "Jan" => 1,
        "Feb" => 2,
        "Mar" => 3,
        "Apr" => 4,
        "May" => 5,
        "Jun" => 6,
        "Jul" => 7,
        "Aug" => 8,
        "Sep" => 9,
        "Oct" => 10,
        "Nov" => 11,
        "Dec" => 12,
        _ => return None,
    };
    let day: i64 = parts.next()?.parse().ok()?;
    let year: i64 = parts.next()?.parse().ok()?;
    Some(days_from_civil(year, month, day) * DAY_MS)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests;
