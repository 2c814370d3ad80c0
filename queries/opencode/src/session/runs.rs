//! What the session-level walks (K10's history filter, K8's turns, K11's pruning, the
//! head's text) need of each message, as plain data read one memo per run of 64 messages.
//!
//! A list of messages is cut into runs from its start. Appending a message changes only the
//! last run, so a walk over a 2000-message session after an append reads 31 memos that are
//! still valid and reads the messages of the last, partial run itself, instead of reading
//! every message's input: an append costs O(n / 64) memo reads plus plain iteration over
//! the facts, not O(n) salsa reads.
//!
//! Full runs never change: they are immortal interned values, so a memo over one depends on
//! its messages only and keeps their MEDIUM durability, and an append (a LOW change) leaves
//! it valid without re-checking anything. The last, partial run changes with every append:
//! it is a [`PartialRun`], which salsa collects a few revisions after its last use, so the
//! walks of one revision share its facts and old ones do not pile up.

use super::Message;
use std::ops::Range;

use super::convert::{JsonLen, Target, model_json_len};
use super::entries::{ToolOutput, summary_entry, tool_outputs};
use super::export::Role;
use ctxgraph_db::Db;

/// Messages per run.
pub const RUN_LEN: usize = 64;

pub use interned::{PartialRun, Run};

// salsa's interned macro generates public functions that carry no docs and cannot be given
// any (as for the session inputs).
#[allow(missing_docs)]
mod interned {
    use super::Message;

    /// [`RUN_LEN`](super::RUN_LEN) consecutive messages of a list, interned so that the
    /// same run finds its memos again in the next revision.
    #[salsa::interned(revisions = usize::MAX, debug)]
    pub struct Run<'db> {
        /// The messages, in list order.
        #[returns(ref)]
        pub messages: Vec<Message>,
    }

    /// The last, shorter run of a list (collected once unused).
    #[salsa::interned(debug)]
    pub struct PartialRun<'db> {
        /// The messages, in list order.
        #[returns(ref)]
        pub messages: Vec<Message>,
    }
}

/// A compaction marker's part (K6).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MarkerFacts {
    /// Made for an overflow (K5).
    pub overflow: bool,
    /// K7.3: written once its summary is done.
    pub tail_start_id: Option<String>,
}

/// One message, as the session-level walks see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Facts {
    /// The message's id.
    pub id: String,
    /// Who wrote it.
    pub role: Role,
    /// `parentID`.
    pub parent_id: Option<String>,
    /// Its compaction part, for a user message that is a marker.
    pub marker: Option<MarkerFacts>,
    /// An assistant message with `summary: true`.
    pub summary: bool,
    /// A finished, error-free summary (K7.2, K10).
    pub completed_summary: bool,
    /// An assistant message with `finish` set.
    pub finished: bool,
    /// K4: its token count.
    pub tokens: Option<u64>,
    /// K11: its completed tool outputs, protected tools left out.
    pub outputs: Vec<ToolOutput>,
}

impl Facts {
    /// A user message that starts a turn: not a compaction marker.
    pub fn starts_turn(&self) -> bool {
        self.role == Role::User && self.marker.is_none()
    }
}

fn facts_of(db: &dyn Db, message: Message) -> Facts {
    let info = message.info(db);
    Facts {
        id: info.id.clone(),
        role: info.role,
        parent_id: info.parent_id.clone(),
        marker: message.compaction_part(db).map(|part| MarkerFacts {
            overflow: part.overflow == Some(true),
            tail_start_id: part.tail_start_id.clone(),
        }),
        summary: info.is_summary(),
        completed_summary: info.is_completed_summary(),
        finished: info.role == Role::Assistant && info.finish.is_some(),
        tokens: info.tokens.map(|t| t.count()),
        outputs: tool_outputs(db, message).clone(),
    }
}

/// The facts of a run's messages.
#[salsa::tracked(returns(ref))]
pub fn run_facts<'db>(db: &'db dyn Db, run: Run<'db>) -> Vec<Facts> {
    run.messages(db).iter().map(|&m| facts_of(db, m)).collect()
}

/// The facts of a partial run's messages.
#[salsa::tracked(returns(ref))]
pub fn partial_run_facts<'db>(db: &'db dyn Db, run: PartialRun<'db>) -> Vec<Facts> {
    run.messages(db).iter().map(|&m| facts_of(db, m)).collect()
}

/// The summarizer's entries of a run's messages, joined by blank lines (empty ones left
/// out).
#[salsa::tracked(returns(ref))]
pub fn run_conversation<'db>(db: &'db dyn Db, run: Run<'db>) -> String {
    join_entries(db, run.messages(db))
}

fn join_entries(db: &dyn Db, messages: &[Message]) -> String {
    let entries: Vec<&str> =
        messages.iter().map(|&m| summary_entry(db, m).as_str()).filter(|e| !e.is_empty()).collect();
    entries.join("\n\n")
}

/// K1's [`JsonLen`] of each of a run's messages for `target`, in order.
#[salsa::tracked(returns(ref))]
pub fn run_json_lens<'db>(db: &'db dyn Db, run: Run<'db>, target: Target<'db>) -> Vec<JsonLen> {
    run.messages(db).iter().map(|&m| model_json_len(db, m, target)).collect()
}

/// [`model_json_len`] of the messages of a list, read one memo per full run (only the runs
/// asked about), the last, partial run message by message.
///
/// Besides the memo reads it saves, this keeps a session-level query's dependencies
/// O(n / 64): salsa reuses one frame per depth of its query stack and clears a frame's
/// dependency set over its whole capacity for every query that runs in it, so a query that
/// read one memo per message would make each of the thousands of queries that run after it
/// at its depth (a session's reads, its messages' conversions) clear a set as large as the
/// session: quadratic in it.
pub struct JsonLens<'a, 'db> {
    db: &'db dyn Db,
    messages: &'a [Message],
    target: Target<'db>,
    /// Each full run's lengths, once read.
    runs: Vec<Option<&'db [JsonLen]>>,
}

impl<'a, 'db> JsonLens<'a, 'db> {
    /// The lengths of `messages`' model messages for `target`.
    pub fn new(db: &'db dyn Db, messages: &'a [Message], target: Target<'db>) -> Self {
        JsonLens { db, messages, target, runs: vec![None; messages.len() / RUN_LEN] }
    }

    /// The length of message `i`.
    pub fn get(&mut self, i: usize) -> JsonLen {
        let run = i / RUN_LEN;
        let Some(slot) = self.runs.get_mut(run) else {
            // The last, partial run: it changes with every append.
            return model_json_len(self.db, self.messages[i], self.target);
        };
        let (db, start) = (self.db, run * RUN_LEN);
        let lens = *slot.get_or_insert_with(|| {
            let run = Run::new(db, self.messages[start..start + RUN_LEN].to_vec());
            run_json_lens(db, run, self.target).as_slice()
        });
        lens[i - start]
    }

    /// The length of the messages in `range` together.
    pub fn sum(&mut self, range: Range<usize>) -> JsonLen {
        range.fold(JsonLen::default(), |acc, i| acc.plus(self.get(i)))
    }
}

/// The facts of every message of `messages`, in order, one memo per run.
pub fn facts<'db>(db: &'db dyn Db, messages: &[Message]) -> Vec<&'db Facts> {
    let mut out = Vec::with_capacity(messages.len());
    for run in messages.chunks(RUN_LEN) {
        let facts = if run.len() == RUN_LEN {
            run_facts(db, Run::new(db, run.to_vec()))
        } else {
            partial_run_facts(db, PartialRun::new(db, run.to_vec()))
        };
        out.extend(facts.iter());
    }
    out
}

/// The summarizer's conversation for `messages`: their entries joined by blank lines. Full
/// runs come from their memos; the entries of a last partial run are read one by one (it
/// is the one that changes from one append to the next). Joined once: the text of a long
/// session is megabytes.
pub fn conversation(db: &dyn Db, messages: &[Message]) -> String {
    let mut pieces: Vec<&str> = Vec::new();
    for run in messages.chunks(RUN_LEN) {
        if run.len() == RUN_LEN {
            pieces.push(run_conversation(db, Run::new(db, run.to_vec())).as_str());
        } else {
            pieces.extend(run.iter().map(|&m| summary_entry(db, m).as_str()));
        }
    }
    pieces.retain(|piece| !piece.is_empty());
    pieces.join("\n\n")
}
