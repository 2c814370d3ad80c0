//! CC44: what scoping a file sent in every request would have saved in this session.
//!
//! A rule file without `paths:` and a `CLAUDE.md` of the working directory go in the first
//! message and ride in every request. Scoped to one folder (`paths: src/**` for a rule, the
//! text moved to `src/CLAUDE.md` for a `CLAUDE.md`), Claude Code would attach it to the first
//! Read or Write under that folder (CC11) and re-attach it after a compaction only on the next
//! one. ctxgraph cannot know which folder a rule is about; it answers for each top-level
//! folder the session read or wrote under: the requests before such a Read or Write (and
//! between a compaction and the next one) would not have carried the file.

use std::collections::{BTreeMap, HashSet};
use std::ops::Range;
use std::path::{Component, Path, PathBuf};

use ctxgraph_db::session_costs::{PathId, SavingSteps};

/// The note `session rules` prints with the savings.
pub const NOTE: &str = "Savings (CC44): a file sent in every request, scoped to one top-level folder the session read or wrote under, would have been attached from the first Read or Write there (again after each compaction); counted with the bytes the file had in each request it would have left. Which folder a rule is about is yours to say: each candidate is listed.";

/// At most this many folders per file.
const MAX_FOLDERS: usize = 8;

/// What the savings are computed from.
pub struct Facts<'a> {
    pub cwd: &'a Path,
    pub paths: &'a [PathBuf],
    /// Files sent in the first message's block.
    pub always: &'a HashSet<PathId>,
    /// Files read or written, with the first request that carried the result.
    pub touches: &'a [(PathBuf, usize)],
    /// Per request: the first after a compaction.
    pub after_compaction: &'a [bool],
}

/// The savings of scoping each always-sent file to each folder the session touched.
pub fn savings(facts: &Facts<'_>) -> Vec<SavingSteps> {
    let steps = facts.after_compaction.len();
    let mut folders: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (file, at) in facts.touches {
        let Ok(relative) = file.strip_prefix(facts.cwd) else { continue };
        let mut parts = relative.components();
        if let (Some(Component::Normal(first)), Some(_)) = (parts.next(), parts.next()) {
            folders.entry(first.to_string_lossy().into_owned()).or_default().push(*at);
        }
    }
    let absent: Vec<(String, Vec<Range<usize>>)> = folders
        .into_iter()
        .map(|(folder, touches)| (folder, absent_steps(&touches, facts.after_compaction)))
        .collect();
    let mut always: Vec<PathId> = facts.always.iter().copied().collect();
    always.sort_unstable();
    let mut out = Vec::new();
    for id in always {
        let path = &facts.paths[id];
        let Some(change) = change(facts.cwd, path) else { continue };
        let name = ctxgraph_db::path::display(path.strip_prefix(facts.cwd).unwrap_or(path));
        if absent.is_empty() && change == Change::Paths {
            #[allow(clippy::single_range_in_vec_init, reason = "a list of one range of steps")]
            out.push(SavingSteps {
                path: id,
                change: "paths: a folder this session never read or wrote under".to_owned(),
                absent: Vec::from([0..steps]),
                how: format!("{name} would not have been sent at all (CC44)"),
            });
        }
        let mut candidates: Vec<&(String, Vec<Range<usize>>)> = absent.iter().collect();
        candidates.sort_by_key(|(_, ranges)| {
            std::cmp::Reverse(ranges.iter().map(ExactSizeIterator::len).sum::<usize>())
        });
        for (folder, ranges) in candidates.into_iter().take(MAX_FOLDERS) {
            out.push(SavingSteps {
                path: id,
                change: match change {
                    Change::Paths => format!("paths: {folder}/**"),
                    Change::Move => format!("move to {folder}/CLAUDE.md"),
                },
                absent: ranges.clone(),
                how: format!(
                    "if {name} concerns only files under {folder}/: attached from the first Read or Write there instead of sent in every request (CC44)"
                ),
            });
        }
    }
    out
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Change {
    /// A rule: give it `paths:`.
    Paths,
    /// A `CLAUDE.md`: move its text to the folder's own.
    Move,
}

/// How `path` could be scoped: a rules-folder file by `paths:`, the working directory's
/// `CLAUDE.md` by moving it; anything else (the user's files, `CLAUDE.local.md`, memory) is
/// not a project file to scope.
fn change(cwd: &Path, path: &Path) -> Option<Change> {
    let relative = path.strip_prefix(cwd).ok()?;
    let text = relative.to_string_lossy();
    if text.starts_with(".claude/rules/") {
        Some(Change::Paths)
    } else if text == "CLAUDE.md" || text == ".claude/CLAUDE.md" {
        Some(Change::Move)
    } else {
        None
    }
}

/// The requests a file scoped to a folder would not be in: before the first touch, and from
/// each compaction to the next touch after it.
fn absent_steps(touches: &[usize], after_compaction: &[bool]) -> Vec<Range<usize>> {
    let mut touched_at = vec![false; after_compaction.len()];
    for &at in touches {
        if let Some(slot) = touched_at.get_mut(at) {
            *slot = true;
        }
    }
    let mut ranges: Vec<Range<usize>> = Vec::new();
    let mut carried = false;
    for (step, (&compacted, &touched)) in after_compaction.iter().zip(&touched_at).enumerate() {
        if compacted {
            carried = false;
        }
        carried |= touched;
        if !carried {
            match ranges.last_mut() {
                Some(last) if last.end == step => last.end = step + 1,
                _ => ranges.push(step..step + 1),
            }
        }
    }
    ranges
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_compaction_drops_what_a_touch_attached() {
        let compacted = [false, false, false, true, false, false];
        assert_eq!(absent_steps(&[1], &compacted), vec![0..1, 3..6]);
        assert_eq!(absent_steps(&[1, 4], &compacted), vec![0..1, 3..4]);
    }
}
