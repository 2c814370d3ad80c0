//! `session rules` for opencode: which rule files each step of an exported session carried
//! (docs/opencode/nearby.md, "What each rule file costs over a session").
//!
//! A step is an assistant message that is not a compaction's summary: one call to the model,
//! whose messages are the history before it as K10 filters it ([`GrowingHistory`]). The system
//! prompt's instruction blocks go with every call. A read's reminder (N5) carries each rule
//! file it loaded as `Instructions from: P` + LF + the text: that piece counts for the file for
//! as long as the read is in the history. It leaves with a compaction (K10) or when pruning
//! clears the read's output (K11); the export keeps no time for a prune, so a pruned read is
//! counted up to the end of its own turn (opencode prunes when a turn ends) and not after:
//! a lower bound when the prune came later.

use std::collections::BTreeMap;
use std::path::PathBuf;

use ctxgraph_db::Db;
use ctxgraph_db::session_costs::{Interner, PathId, SessionOccurrences, StepOccurrences, TextId};

use super::export::{PartKind, Role};
use super::history::{GrowingHistory, Growth};
use super::{Message, Session};

const PIECE: &str = "Instructions from: ";

/// The rule texts of every step of `session`; `system` is the system prompt's instruction
/// files (path, the block's text), sent with every call.
pub fn session_occurrences(
    db: &dyn Db,
    session: Session,
    system: &[(PathBuf, String)],
    mut notes: Vec<String>,
) -> SessionOccurrences {
    let mut texts = Interner::default();
    let always: Vec<(PathId, TextId)> =
        system.iter().map(|(path, text)| (texts.path(path.clone()), texts.text(text))).collect();
    let messages = session.messages(db);
    let mut history = GrowingHistory::new(messages);
    let mut present: BTreeMap<(PathId, TextId), u32> = BTreeMap::new();
    // Pieces of pruned reads counted until their turn ends.
    let mut pruned: Vec<(PathId, TextId)> = Vec::new();
    let mut steps = Vec::new();
    let mut after_compaction = false;
    for &message in messages {
        let info = message.info(db);
        if info.role == Role::Assistant && !info.is_summary() {
            let mut step = present.clone();
            for &key in &always {
                *step.entry(key).or_default() += 1;
            }
            steps.push(StepOccurrences {
                request: info.id.clone(),
                after_compaction: std::mem::take(&mut after_compaction),
                present: step.into_iter().map(|((p, t), n)| (p, t, n)).collect(),
            });
        }
        match history.grow(db) {
            Some(Growth::Appended(message)) => {
                if message.starts_turn(db) {
                    for key in pruned.drain(..) {
                        remove(&mut present, key);
                    }
                }
                for (key, was_pruned) in reads(db, message, &mut texts) {
                    *present.entry(key).or_default() += 1;
                    if was_pruned {
                        pruned.push(key);
                    }
                }
            }
            Some(Growth::Refiltered) => {
                // A compaction marker or a summary: the history is filtered anew (K10).
                after_compaction |= info.is_summary();
                present.clear();
                pruned.clear();
                let kept = history.history();
                let turn = kept.iter().rposition(|m| m.starts_turn(db)).unwrap_or(0);
                for (index, &kept_message) in kept.iter().enumerate() {
                    for (key, was_pruned) in reads(db, kept_message, &mut texts) {
                        if was_pruned && index < turn {
                            continue;
                        }
                        *present.entry(key).or_default() += 1;
                        if was_pruned {
                            pruned.push(key);
                        }
                    }
                }
            }
            None => {}
        }
    }
    notes.push("A step is one call to the model (an assistant message that is not a compaction's summary); its messages are the history before it, filtered at the last compaction (K10). The system prompt's instruction files go with every call; a read's rule piece (`Instructions from: P` and the text, N5) stays until a compaction drops the read or pruning clears it (K11).".to_owned());
    notes.push("The export keeps no time for a prune: a pruned read is counted up to the end of its own turn (a lower bound when the prune came later).".to_owned());
    notes.push(
        "The system prompt is not in the export: its instruction files are taken as they are on disk now."
            .to_owned(),
    );
    SessionOccurrences { paths: texts.paths, texts: texts.texts, steps, savings: Vec::new(), notes }
}

fn remove(present: &mut BTreeMap<(PathId, TextId), u32>, key: (PathId, TextId)) {
    if let Some(count) = present.get_mut(&key) {
        *count -= 1;
        if *count == 0 {
            present.remove(&key);
        }
    }
}

/// The rule pieces of a message's completed reads, each with whether pruning cleared it.
fn reads(db: &dyn Db, message: Message, texts: &mut Interner) -> Vec<((PathId, TextId), bool)> {
    let mut found = Vec::new();
    for part in message.parts(db) {
        if part.kind() != PartKind::Tool || part.tool.as_deref() != Some("read") {
            continue;
        }
        let Some(state) = part.completed_tool() else { continue };
        let output = state.output();
        for path in state.loaded() {
            let marker = format!("{PIECE}{path}\n");
            let Some(start) = output.find(&marker) else { continue };
            let body = start + marker.len();
            let next = output[body..].find(&format!("\n\n{PIECE}")).map(|i| body + i);
            let close = output[body..].find("\n</system-reminder>").map(|i| body + i);
            let end = next.into_iter().chain(close).min().unwrap_or(output.len());
            found.push((
                (texts.path(PathBuf::from(path)), texts.text(&output[start..end])),
                state.is_compacted(),
            ));
        }
    }
    found
}
