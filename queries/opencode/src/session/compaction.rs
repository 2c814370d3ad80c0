//! Compaction (docs/opencode/compaction.md) as the opencode-ai 1.18.33 binary does it (the erratum box wins over K1–K11):
//! the usable window, overflow, the tail kept verbatim, the head rendered for the
//! summarizer, the previous summary it anchors to, and what pruning marks.

use std::collections::HashMap;
use std::ops::Range;

use serde::Serialize;

use super::convert::{JsonLen, Target, TargetModel};
use super::export::{PartKind, Role};
use super::history::filtered_history;
use super::runs::{self, Facts, JsonLens};
use super::{Message, Session, estimate_units};
use crate::config::schema::Compaction;
use ctxgraph_db::Db;

/// K2: the output cap without `OPENCODE_EXPERIMENTAL_OUTPUT_TOKEN_MAX`.
pub const OUTPUT_TOKEN_MAX: u64 = 32_000;
/// K3: the most `reserved` defaults to.
pub const COMPACTION_BUFFER: u64 = 20_000;
/// Erratum: bounds of the default preserve budget.
pub const MIN_PRESERVE_RECENT_TOKENS: u64 = 2_000;
/// Erratum: the upper bound of the default preserve budget (the spec's 8 000 is superseded).
pub const MAX_PRESERVE_RECENT_TOKENS: u64 = 15_000;
/// K11.
pub const PRUNE_MINIMUM: u64 = 20_000;
/// K11: the newest tool outputs' estimated tokens pruning never touches.
pub const PRUNE_PROTECT: u64 = 40_000;

/// `provider.<p>.models.<m>.limit`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct ModelLimit {
    /// The context window; 0 means unknown (no usable window, K3).
    pub context: u64,
    /// Absent or 0: not set.
    pub input: Option<u64>,
    /// The output limit; 0 means unset (the 32 000 cap applies, K2).
    pub output: u64,
}

/// Everything besides the messages that the plan depends on.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PlanParams {
    /// The model's limits (K2, K3).
    pub limit: ModelLimit,
    /// The merged config's `compaction` block.
    pub compaction: Compaction,
    /// The model the summarizer runs on (the session's, unless the `compaction` agent
    /// names another one).
    pub target: TargetModel,
}

impl PlanParams {
    /// K2.
    pub fn max_output(&self) -> u64 {
        match self.limit.output.min(OUTPUT_TOKEN_MAX) {
            0 => OUTPUT_TOKEN_MAX,
            n => n,
        }
    }

    /// K3 (erratum: unchanged).
    pub fn usable(&self) -> u64 {
        if self.limit.context == 0 {
            return 0;
        }
        let max_output = self.max_output();
        let reserved = self.compaction.reserved.unwrap_or(COMPACTION_BUFFER.min(max_output));
        match self.limit.input.filter(|&n| n > 0) {
            Some(input) => input.saturating_sub(reserved),
            None => self.limit.context.saturating_sub(max_output),
        }
    }

    /// Erratum: `preserve_recent_tokens ?? min(15000, max(2000, floor(usable × 0.25)))`.
    pub fn budget(&self) -> u64 {
        self.compaction.preserve_recent_tokens.unwrap_or_else(|| {
            (self.usable() / 4).clamp(MIN_PRESERVE_RECENT_TOKENS, MAX_PRESERVE_RECENT_TOKENS)
        })
    }
}

/// One turn considered for the tail, newest first, with its K1 size.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TurnSize {
    /// The user message that starts it.
    pub id: String,
    /// The K1 estimate of the turn's model messages.
    pub tokens: u64,
    /// It fits whole in what was left of the budget when the walk reached it.
    pub fits: bool,
    /// Kept whole in the tail: it fits, and there is a tail (K8 keeps none when it would
    /// start at the first message).
    pub kept: bool,
}

/// What opencode does at the next step of the session.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CompactionPlan {
    /// K3: the usable window.
    pub usable: u64,
    /// K8: the tail's token budget.
    pub budget: u64,
    /// `compaction.tail_turns`: how many of the newest turns are candidates (unset: all).
    pub tail_turns: Option<u64>,
    /// K4: the token count of the last finished assistant message that is not a summary.
    pub tokens: Option<u64>,
    /// K4/K5: that count reaches the usable window, so the next step compacts.
    pub overflow: bool,
    /// The compaction marker waiting to be processed, if the session ends with one.
    pub marker: Option<String>,
    /// K7.1: the user turn replayed after an overflow compaction.
    pub replay: Option<String>,
    /// K8's candidate turns, newest first, as far as the walk went.
    pub turns: Vec<TurnSize>,
    /// K8: the first message kept verbatim after the summary, when there is a tail.
    pub tail_start_id: Option<String>,
    /// Messages summarised (by id), oldest first.
    pub head: Vec<String>,
    /// K7.2: the last completed summary, which the new one updates.
    pub previous_summary: Option<String>,
    /// The text between `<conversation>\n` and `\n</conversation>`.
    pub conversation: String,
    /// K11: the tool parts pruning marks when the loop exits (empty when pruning is off or
    /// would free too little).
    pub pruned: Vec<String>,
    /// K11's numbers behind `pruned`.
    pub prune: PruneScan,
}

impl TurnSize {
    /// What K8 does with the turn, in words.
    pub fn verdict(&self) -> &'static str {
        match (self.fits, self.kept) {
            (true, true) => "kept whole",
            (true, false) => "fits, but summarised (no tail)",
            (false, _) => "does not fit whole",
        }
    }
}

impl CompactionPlan {
    /// K8: why there is no tail, in words (`None` when there is one).
    pub fn no_tail_reason(&self) -> Option<&'static str> {
        if self.tail_start_id.is_some() {
            None
        } else if self.tail_turns == Some(0) || self.turns.is_empty() {
            Some("no turn is a candidate")
        } else if self.turns.iter().any(|t| t.fits) {
            Some("every turn fits, so the tail would start at the first message, and K8 keeps none then")
        } else {
            Some("the newest turn does not fit the budget, not even from a later message")
        }
    }
}

/// K11's running numbers.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PruneScan {
    /// `compaction.prune` is true.
    pub enabled: bool,
    /// Estimated tokens of the tool outputs walked.
    pub total: u64,
    /// Estimated tokens of the outputs past the protected 40 000.
    pub candidates: u64,
}

/// Compaction at the session's next step: overflow (K4), the pending marker (K6) and replay (K7.1),
/// the tail (K8), the head's conversation (K7), the previous summary (K7.2) and pruning (K11).
#[salsa::tracked(returns(ref))]
pub fn compaction_plan(db: &dyn Db, session: Session, params: PlanParams) -> CompactionPlan {
    let history = filtered_history(db, session);
    let facts = runs::facts(db, history);
    let usable = params.usable();
    let last_finished = facts.iter().rev().find(|f| f.finished);
    let tokens = last_finished.filter(|f| !f.summary).and_then(|f| f.tokens);
    let overflow =
        params.compaction.auto() && params.limit.context > 0 && tokens.is_some_and(|t| t >= usable);

    // K7.1–2: the messages the compaction works on: `history[..end]` without earlier pairs.
    let pending = facts.last().copied().filter(|f| f.marker.is_some());
    let mut end = history.len();
    let mut replay = None;
    if let Some(marker) = pending {
        let at = end - 1;
        if marker.marker.as_ref().is_some_and(|m| m.overflow)
            && let Some(user) = (0..at).rev().find(|&i| facts[i].starts_turn())
            && facts[..user].iter().any(|f| f.starts_turn())
        {
            replay = Some(facts[user].id.clone());
            end = user;
        } else {
            end = at;
        }
    }
    let (kept, previous_summary) = without_compactions(db, history, &facts[..end]);
    let messages: Vec<Message> = kept.iter().map(|&i| history[i]).collect();
    let facts: Vec<&Facts> = kept.iter().map(|&i| facts[i]).collect();

    let (turns, tail_start) = select_tail(db, &messages, &facts, &params);
    let head_len = tail_start.unwrap_or(messages.len());
    let conversation = runs::conversation(db, &messages[..head_len]);
    let (pruned, prune) = prune(&runs::facts(db, session.messages(db)), &params.compaction);
    CompactionPlan {
        usable,
        budget: params.budget(),
        tail_turns: params.compaction.tail_turns,
        tokens,
        overflow,
        marker: pending.map(|f| f.id.clone()),
        replay,
        turns,
        tail_start_id: tail_start.map(|i| facts[i].id.clone()),
        head: facts[..head_len].iter().map(|f| f.id.clone()).collect(),
        previous_summary,
        conversation,
        pruned,
        prune,
    }
}

/// K7.2: the indices of `facts` left once earlier compaction pairs (marker + its completed
/// summary) are dropped, and the last summary's text (text parts trimmed, empty ones
/// dropped, joined by a blank line).
fn without_compactions(db: &dyn Db, history: &[Message], facts: &[&Facts]) -> (Vec<usize>, Option<String>) {
    let mut dropped = vec![false; facts.len()];
    let mut previous = None;
    // Each marker by id (the first of duplicates, as a scan from the start finds it).
    let mut markers: HashMap<&str, usize> = HashMap::new();
    for (i, m) in facts.iter().enumerate().rev().filter(|(_, m)| m.role == Role::User && m.marker.is_some()) {
        markers.insert(m.id.as_str(), i);
    }
    for (i, summary) in facts.iter().enumerate() {
        if !summary.completed_summary {
            continue;
        }
        let Some(&marker) = summary.parent_id.as_deref().and_then(|id| markers.get(id)) else { continue };
        dropped[marker] = true;
        dropped[i] = true;
        // Summaries are few: their text is read off the message itself.
        let text = history[i]
            .parts(db)
            .iter()
            .filter(|p| p.kind() == PartKind::Text)
            .map(|p| p.text().trim())
            .filter(|t| !t.is_empty())
            .collect::<Vec<_>>()
            .join("\n\n");
        let text = text.trim();
        previous = (!text.is_empty()).then(|| text.to_owned());
    }
    let kept = (0..facts.len()).filter(|&i| !dropped[i]).collect();
    (kept, previous)
}

/// Erratum (K8 as the binary does it): turns newest → oldest; whole turns while they fit;
/// the first that does not fit may be kept from a later message inside it; no tail when
/// nothing was kept or the tail would start at the first message.
fn select_tail(
    db: &dyn Db,
    messages: &[Message],
    facts: &[&Facts],
    params: &PlanParams,
) -> (Vec<TurnSize>, Option<usize>) {
    if params.compaction.tail_turns == Some(0) {
        return (Vec::new(), None);
    }
    let budget = params.budget();
    let starts: Vec<usize> = (0..facts.len()).filter(|&i| facts[i].starts_turn()).collect();
    let turns: Vec<(usize, usize)> = starts
        .iter()
        .enumerate()
        .map(|(k, &s)| (s, starts.get(k + 1).copied().unwrap_or(messages.len())))
        .collect();
    let candidates = match params.compaction.tail_turns {
        Some(n) => &turns[turns.len().saturating_sub(usize::try_from(n).unwrap_or(usize::MAX))..],
        None => &turns[..],
    };
    // K1: a turn's estimate is that of the JSON of its messages' model messages.
    let mut lens = JsonLens::new(db, messages, Target::new(db, params.target.clone()));
    let mut sizes = Vec::new();
    let mut total = 0;
    let mut start = None;
    for &(turn_start, turn_end) in candidates.iter().rev() {
        let size = estimate_units(lens.sum(turn_start..turn_end).list_units());
        let id = facts[turn_start].id.clone();
        if total + size <= budget {
            total += size;
            start = Some(turn_start);
            sizes.push(TurnSize { id, tokens: size, fits: true, kept: true });
            continue;
        }
        sizes.push(TurnSize { id, tokens: size, fits: false, kept: false });
        let remaining = budget - total;
        if remaining > 0
            && turn_end - turn_start > 1
            && let Some(from) = split_tail(&mut lens, turn_start + 1..turn_end, remaining)
        {
            start = Some(from);
        }
        break;
    }
    let start = start.filter(|&s| s > 0);
    if start.is_none() {
        // No tail: the turns that fit are summarised with the rest.
        for turn in &mut sizes {
            turn.kept = false;
        }
    }
    (sizes, start)
}

/// The first `from` in `range` whose messages `from..range.end` fit in `remaining`
/// (erratum: the binary tries each start in turn, oldest first). A suffix only grows as
/// `from` moves back, so the ones that fit are the shortest few: summed from the end,
/// newest first, in one pass.
fn split_tail(lens: &mut JsonLens<'_, '_>, range: Range<usize>, remaining: u64) -> Option<usize> {
    let mut len = JsonLen::default();
    let mut split = None;
    for from in range.rev() {
        len = lens.get(from).plus(len);
        if estimate_units(len.list_units()) > remaining {
            break;
        }
        split = Some(from);
    }
    split
}

/// K11 over the whole session (not the filtered history): newest → oldest, the two most
/// recent turns protected, stopping at the first summary or already-pruned output.
fn prune(messages: &[&Facts], compaction: &Compaction) -> (Vec<String>, PruneScan) {
    let mut scan = PruneScan { enabled: compaction.prune == Some(true), ..PruneScan::default() };
    if !scan.enabled {
        return (Vec::new(), scan);
    }
    let mut marked = Vec::new();
    let mut users = 0;
    'walk: for message in messages.iter().rev() {
        if message.role == Role::User {
            users += 1;
        }
        if users < 2 {
            continue;
        }
        if message.summary {
            break;
        }
        for output in message.outputs.iter().rev() {
            if output.compacted {
                break 'walk;
            }
            scan.total += output.tokens;
            if scan.total <= PRUNE_PROTECT {
                continue;
            }
            scan.candidates += output.tokens;
            marked.push(output.part_id.clone());
        }
    }
    if scan.candidates <= PRUNE_MINIMUM {
        marked.clear();
    }
    (marked, scan)
}

/// ctxgraph's own summary instructions (opencode's prompt text is its own; we reproduce
/// the structure, not the words). `{conversation}` is replaced by the head as opencode
/// renders it, `{previous_summary}` by the K9 anchor or nothing.
pub const DEFAULT_SUMMARY_TEMPLATE: &str = include_str!("summary-template.md");

/// The compaction request's user message for `plan`, from `template`.
pub fn summary_request(template: &str, plan: &CompactionPlan) -> String {
    let previous = plan
        .previous_summary
        .as_deref()
        .map(|s| {
            format!(
                "An earlier note covers everything before the conversation above. Merge it with the \
                 conversation into one new note; where they disagree, the conversation is newer.\n\
                 <prior-summary>\n{s}\n</prior-summary>\n\n"
            )
        })
        .unwrap_or_default();
    // One pass, so a conversation that contains `{previous_summary}` is left alone.
    let mut out = String::with_capacity(template.len() + plan.conversation.len());
    let mut rest = template;
    while let Some(at) = rest.find('{') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        if let Some(after) = tail.strip_prefix("{conversation}") {
            out.push_str(&plan.conversation);
            rest = after;
        } else if let Some(after) = tail.strip_prefix("{previous_summary}") {
            out.push_str(&previous);
            rest = after;
        } else {
            out.push('{');
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    out
}
