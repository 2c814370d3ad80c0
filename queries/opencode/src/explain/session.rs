//! `explain --session`: why each read in a session attached the rule files it did (N2–N7),
//! and what the next call summarises, keeps and prunes (K4–K11).
//!
//! Like the rest of `explain`, nothing here decides anything: the verdicts are the ones
//! [`nearby_in_session`] (for every read at once: [`SessionReads`]), [`filtered_history`]
//! and [`compaction_plan`] compute; this module traces each one to its rule and, for a rule
//! attached again, to the earlier read whose load no longer counts.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use crate::session::compaction::{CompactionPlan, PlanParams, compaction_plan};
use crate::session::convert::{Target, model_json_len};
use crate::session::export::{Role, ToolStatus};
use crate::session::history::{GrowingHistory, filtered_history};
use crate::session::reads::{
    ReadPoint, RuleState, SessionRead, SessionReads, SessionRule, nearby_in_session,
};
use crate::session::{Message, Session, SessionError};
use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::path;

use super::session_model::{
    Compacts, EarlierLoad, Fate, Lapse, MessageFate, NextStep, ReadExplanation, RuleExplanation,
    SessionExplanation,
};

/// Explains `session`'s reads (all of them, or only those of message `only`) and its next
/// step; with `asked`, also a read of that file at the next step.
pub fn explain_session(
    db: &dyn Db,
    ws: Workspace,
    session: Session,
    params: &PlanParams,
    only: Option<&str>,
    asked: Option<&Path>,
) -> Result<SessionExplanation, SessionError> {
    let messages = session.messages(db);
    if let Some(id) = only
        && !messages.iter().any(|m| m.id(db) == id)
    {
        return Err(SessionError::NoMessage(id.to_owned()));
    }
    let plan = compaction_plan(db, session, params.clone());
    let history = filtered_history(db, session);

    let mut reads = Vec::new();
    let mut walk = SessionReads::new(messages);
    let mut earlier = EarlierReads::default();
    for &message in messages {
        let before = Before {
            user_attached: message.info(db).role == Role::User,
            history: walk.history(),
            cut_by: earlier.cut_by.as_deref(),
        };
        let mut walked = Vec::new();
        for SessionRead { part, file, nearby } in walk.reads(db, ws)? {
            // A read that reached the rules has a state (completed or failed).
            let Some(state) = &part.state else { continue };
            let status = state.status;
            let recorded =
                (status == ToolStatus::Completed).then(|| state.loaded().map(PathBuf::from).collect());
            let read = ReadExplanation {
                message: message.id(db).to_owned(),
                part: Some(part.id.clone()),
                file,
                status: Some(status),
                kind: nearby.kind,
                rules: Vec::new(),
                loaded: nearby.loaded.clone(),
                recorded,
            };
            let read = explained(read, nearby.rules, |rule| earlier.lapsed(rule, &before));
            walked.push(Walked {
                message: read.message.clone(),
                part: part.id.clone(),
                failed: status == ToolStatus::Error,
                pruned: state.is_compacted(),
                attached: read
                    .rules
                    .iter()
                    .filter(|r| r.found.state.claimed_here())
                    .map(|r| r.found.path.clone())
                    .collect(),
            });
            if only.is_none_or(|id| id == read.message) {
                reads.push(read);
            }
        }
        earlier.add(walked);
        if message.info(db).is_completed_summary() {
            earlier.cut_by.clone_from(&message.info(db).parent_id);
        }
        walk.advance(db);
    }
    if let Some(file) = asked {
        let file = path::resolve(ws.cwd(db), file);
        let nearby = nearby_in_session(db, ws, session, &file, &ReadPoint::NextStep)?;
        let read = ReadExplanation {
            message: messages.last().map(|m| m.id(db).to_owned()).unwrap_or_default(),
            part: None,
            file,
            status: None,
            kind: nearby.kind,
            rules: Vec::new(),
            loaded: nearby.loaded.clone(),
            recorded: None,
        };
        let before =
            Before { user_attached: false, history: walk.history(), cut_by: earlier.cut_by.as_deref() };
        reads.push(explained(read, nearby.rules, |rule| earlier.lapsed(rule, &before)));
    }

    // Past the last message, the cut is the session's.
    let fates = fates(db, messages, history, plan, params, earlier.cut_by.as_deref());
    Ok(SessionExplanation {
        session: session.info(db).id.clone(),
        messages: messages.len(),
        next_step: next_step(db, messages, plan, params),
        history: fates,
        reads,
    })
}

/// A read already explained, as later reads look back at it.
struct Walked {
    message: String,
    part: String,
    failed: bool,
    pruned: bool,
    /// The rules its walk attached (for a failed read: claimed, then lost).
    attached: Vec<PathBuf>,
}

/// The reads of the messages before the current one, as its reads look back at them.
#[derive(Default)]
struct EarlierReads {
    /// Each rule file's latest read that attached it.
    latest: HashMap<PathBuf, Rc<Walked>>,
    /// The marker of the last completed compaction (K10's cut).
    cut_by: Option<String>,
}

/// Where the current message stands: what [`EarlierReads::lapsed`] asks of it.
struct Before<'a, 'db> {
    /// A user message: its reads are user-attached files.
    user_attached: bool,
    /// K10's history of the messages before it.
    history: &'a GrowingHistory<'db>,
    /// The marker of the last completed compaction before it.
    cut_by: Option<&'a str>,
}

impl EarlierReads {
    /// A message's reads, once explained.
    fn add(&mut self, walked: Vec<Walked>) {
        for read in walked.into_iter().map(Rc::new) {
            for rule in &read.attached {
                self.latest.insert(rule.clone(), Rc::clone(&read));
            }
        }
    }

    /// The latest earlier read that attached `rule` and no longer counts.
    fn lapsed(&self, rule: &Path, before: &Before<'_, '_>) -> Option<EarlierLoad> {
        let earlier = self.latest.get(rule)?;
        let lapse = if before.user_attached {
            Lapse::UserAttached
        } else if earlier.failed {
            Lapse::Failed
        } else if earlier.pruned {
            Lapse::Pruned
        } else if before.history.contains_id(&earlier.message) {
            // Still in the history and completed: it counts (the walk would have said
            // `already_loaded`); nothing lapsed.
            return None;
        } else {
            Lapse::CompactedAway { by: before.cut_by.unwrap_or_default().to_owned() }
        };
        Some(EarlierLoad { message: earlier.message.clone(), part: earlier.part.clone(), lapse })
    }
}

fn explained(
    mut read: ReadExplanation,
    rules: Vec<SessionRule>,
    earlier: impl Fn(&Path) -> Option<EarlierLoad>,
) -> ReadExplanation {
    read.rules = rules
        .into_iter()
        .map(|rule| {
            let earlier = if rule.state.claimed_here() { earlier(&rule.path) } else { None };
            let shown = rule.state == RuleState::Attached;
            let (id, mut why) = super::prose::session_rule(&rule.state, earlier.as_ref());
            why.push_str(&super::prose::race_and_model(
                rule.race.as_deref(),
                rule.race_unlisted,
                rule.computed.as_ref(),
            ));
            RuleExplanation { found: rule, shown, earlier, rule: id, why }
        })
        .collect();
    read
}

fn next_step(db: &dyn Db, messages: &[Message], plan: &CompactionPlan, params: &PlanParams) -> NextStep {
    let compacts = match &plan.marker {
        Some(marker) => {
            let auto = messages
                .iter()
                .find(|m| m.id(db) == marker)
                .and_then(|m| m.compaction_part(db))
                .and_then(|p| p.auto)
                .unwrap_or(false);
            Compacts::Pending { marker: marker.clone(), auto }
        }
        None if plan.overflow => Compacts::Overflow,
        None => Compacts::No,
    };
    let (rule, why) = super::prose::compacts(&compacts, plan, params);
    NextStep {
        usable: plan.usable,
        budget: plan.budget,
        tokens: plan.tokens,
        compacts,
        turns: plan.turns.clone(),
        tail_start_id: plan.tail_start_id.clone(),
        no_tail: plan.no_tail_reason(),
        prune: plan.prune.clone(),
        rule,
        why,
    }
}

fn fates(
    db: &dyn Db,
    messages: &[Message],
    history: &[Message],
    plan: &CompactionPlan,
    params: &PlanParams,
    cut_by: Option<&str>,
) -> Vec<MessageFate> {
    let in_history: HashSet<Message> = history.iter().copied().collect();
    let target = Target::new(db, params.target.clone());
    let head: HashSet<&str> = plan.head.iter().map(String::as_str).collect();
    // Markers answered by a completed summary, and those summaries.
    let answered: HashSet<&str> = messages
        .iter()
        .filter(|m| m.info(db).is_completed_summary())
        .filter_map(|m| m.info(db).parent_id.as_deref())
        .collect();
    let replay_at = plan.replay.as_deref().and_then(|id| messages.iter().position(|m| m.id(db) == id));
    let marker_at = plan.marker.as_deref().and_then(|id| messages.iter().position(|m| m.id(db) == id));
    let pruned: HashSet<&str> = plan.pruned.iter().map(String::as_str).collect();
    let mut turn: Option<String> = None;
    messages
        .iter()
        .enumerate()
        .map(|(i, &message)| {
            let info = message.info(db);
            let id = info.id.as_str();
            if message.starts_turn(db) {
                turn = Some(id.to_owned());
            }
            let turn = turn.clone();
            let fate = if !in_history.contains(&message) {
                Fate::Dropped { by: cut_by.unwrap_or_default().to_owned() }
            } else if marker_at == Some(i) {
                Fate::PendingMarker
            } else if replay_at.is_some_and(|r| i >= r && marker_at.is_none_or(|m| i < m)) {
                Fate::Replayed
            } else if answered.contains(id) || info.is_completed_summary() {
                Fate::EarlierCompaction
            } else if head.contains(id) {
                Fate::Summarised { turn }
            } else {
                Fate::Tail { turn }
            };
            let next_call = in_history.contains(&message) && model_json_len(db, message, target).count > 0;
            let parts = message.parts(db);
            let tool_ids = |compacted: bool| -> Vec<String> {
                parts
                    .iter()
                    .filter(|p| p.completed_tool().is_some_and(|s| s.is_compacted() == compacted))
                    .map(|p| p.id.clone())
                    .collect()
            };
            let (rule, why) = super::prose::fate(&fate, next_call);
            MessageFate {
                id: id.to_owned(),
                role: info.role,
                fate,
                next_call,
                pruned: tool_ids(false).into_iter().filter(|p| pruned.contains(p.as_str())).collect(),
                cleared: tool_ids(true),
                rule,
                why,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::reads::Holder;

    /// A rule's explanation is the session's own `SessionRule` with the explanation's fields
    /// after it, all at one level of the JSON, in this order.
    #[test]
    fn a_rule_explanation_is_one_flat_object() {
        let found = SessionRule {
            path: PathBuf::from("/p/AGENTS.md"),
            state: RuleState::Claimed { by_part: "prt_1".to_owned() },
            race: Some(
                vec![Holder { part: Some("prt_1".to_owned()), file: PathBuf::from("/p/a.rs") }].into(),
            ),
            race_unlisted: Some(3),
            computed: Some(RuleState::Attached),
        };
        let explained =
            RuleExplanation { found, shown: false, earlier: None, rule: "N4.1", why: "w".to_owned() };
        assert_eq!(
            serde_json::to_string(&explained).expect("json"),
            r#"{"path":"/p/AGENTS.md","state":"claimed","by_part":"prt_1","race":[{"part":"prt_1","file":"/p/a.rs"}],"race_unlisted":3,"computed":{"state":"attached"},"shown":false,"earlier":null,"rule":"N4.1","why":"w"}"#
        );
    }
}
