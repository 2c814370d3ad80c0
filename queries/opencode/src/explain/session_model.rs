//! What `explain --session` reports (the data, serialised as is by `--format json`): each
//! read's rule files and their fates, and what the next call summarises, keeps and prunes.
//! `session` computes it, `prose` says it in words.

use std::path::PathBuf;

use serde::Serialize;

use crate::nearby::ReadKind;
use crate::session::compaction::{PruneScan, TurnSize};
use crate::session::export::{Role, ToolStatus};
use crate::session::reads::SessionRule;

/// Everything `explain --session` says about one session.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SessionExplanation {
    /// The session id.
    pub session: String,
    /// How many messages were considered (the session up to `--message`, when given).
    pub messages: usize,
    /// What the next step does about compaction.
    pub next_step: NextStep,
    /// Every message and what becomes of it at the next call and the next compaction.
    pub history: Vec<MessageFate>,
    /// The reads explained, in session order (a read asked about last).
    pub reads: Vec<ReadExplanation>,
}

/// The compaction decision at the session's next step.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct NextStep {
    /// K3.
    pub usable: u64,
    /// K8: what the tail may hold.
    pub budget: u64,
    /// K4: the last finished assistant message's token count.
    pub tokens: Option<u64>,
    /// Whether, and why, the next step compacts.
    pub compacts: Compacts,
    /// K8's turns, newest first, with their sizes.
    pub turns: Vec<TurnSize>,
    /// The first message kept verbatim after the summary.
    pub tail_start_id: Option<String>,
    /// K8: why there is no tail, when there is none.
    pub no_tail: Option<&'static str>,
    /// K11's running numbers.
    pub prune: PruneScan,
    /// The rule that decides `compacts`.
    pub rule: &'static str,
    /// `compacts` in words.
    pub why: String,
}

/// Whether the next step compacts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "trigger", rename_all = "snake_case")]
pub enum Compacts {
    /// K4: below the usable window (or overflow checks are off): no compaction yet.
    No,
    /// K4/K5: the last step reached the usable window.
    Overflow,
    /// K5/K6: the session ends with a compaction marker not yet processed.
    Pending {
        /// The marker message.
        marker: String,
        /// `/compact` (false) or an overflow (true).
        auto: bool,
    },
}

/// One message and what becomes of it.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MessageFate {
    /// The message id.
    pub id: String,
    /// `user` or `assistant`.
    pub role: Role,
    /// What the compaction does with it (when the next step compacts; otherwise when one
    /// would run now).
    #[serde(flatten)]
    pub fate: Fate,
    /// K10: it is in the history the next normal call sends.
    pub next_call: bool,
    /// K11: its tool parts pruning marks when the loop exits.
    pub pruned: Vec<String>,
    /// K11: its tool parts already pruned (their output reads as cleared).
    pub cleared: Vec<String>,
    /// The rule behind `fate`.
    pub rule: &'static str,
    /// `fate` in words.
    pub why: String,
}

/// What a compaction does with a message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "fate", rename_all = "snake_case")]
pub enum Fate {
    /// K10: cut from the history by an earlier compaction (marker `by`).
    Dropped {
        /// The marker of the compaction that cut it.
        by: String,
    },
    /// K7.2: the marker or the summary of an earlier compaction: hidden from the
    /// summarizer (the summary is its prior summary), sent as the question and answer
    /// pair in normal calls.
    EarlierCompaction,
    /// K7/K8: summarised (in the summarizer's conversation).
    Summarised {
        /// The user message that starts its turn, if any.
        turn: Option<String>,
    },
    /// K8: kept verbatim after the summary.
    Tail {
        /// The user message that starts its turn, if any.
        turn: Option<String>,
    },
    /// K6: the compaction marker the next step processes.
    PendingMarker,
    /// K7.1: the turn re-sent after an overflow compaction (not summarised).
    Replayed,
}

/// One read: the rule files its walk found and what became of each.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ReadExplanation {
    /// The message the read belongs to (for a read asked about: the message it follows).
    pub message: String,
    /// The tool part, or `None` for a read asked about (`explain --session S FILE`).
    pub part: Option<String>,
    /// The file read.
    pub file: PathBuf,
    /// The call's recorded status (`None` for a read asked about).
    pub status: Option<ToolStatus>,
    /// What the read tool makes of the file now.
    pub kind: ReadKind,
    /// One per directory with a rule file, nearest first.
    pub rules: Vec<RuleExplanation>,
    /// `metadata.loaded` as ctxgraph computes it.
    pub loaded: Vec<PathBuf>,
    /// `metadata.loaded` as the session recorded it (completed reads).
    pub recorded: Option<Vec<PathBuf>>,
}

/// One rule file a read's walk found.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RuleExplanation {
    /// The rule file and its fate, as the session's reads decided it (N2–N7): attached or
    /// why not, the race, the model beside the record.
    #[serde(flatten)]
    pub found: SessionRule,
    /// Its text reaches the model in this read's `<system-reminder>`.
    pub shown: bool,
    /// For a rule attached again: the latest earlier read that attached it, and why that
    /// no longer counts.
    pub earlier: Option<EarlierLoad>,
    /// The rule that decided it.
    pub rule: &'static str,
    /// The decision in words.
    pub why: String,
}

/// An earlier read that attached a rule, and why it does not stop a later read (N7).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct EarlierLoad {
    /// Its message.
    pub message: String,
    /// Its tool part.
    pub part: String,
    /// Why it no longer counts.
    #[serde(flatten)]
    pub lapse: Lapse,
}

/// Why an earlier load does not count for a later read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "lapse", rename_all = "snake_case")]
pub enum Lapse {
    /// K11: its output was pruned.
    Pruned,
    /// K10: a compaction (marker `by`) removed it from the history.
    CompactedAway {
        /// The marker of that compaction.
        by: String,
    },
    /// N6: the read failed (a binary file), so it was never completed.
    Failed,
    /// N4: the later read is a user-attached file, read without history.
    UserAttached,
}
