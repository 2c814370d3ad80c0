//! What each rule-like file costs over a recorded session (`session rules`), in one shape for
//! every agent whose sessions a profile models.
//!
//! An agent's profile reads its own session record and says, per main-loop request (a
//! *step*), which texts of which files were present in that request: [`SessionOccurrences`].
//! Everything after that is shared: the bytes and tokens per step and over the session
//! ([`SessionCosts`]), and what a change to a file would save ([`Saving`]), counted here once
//! with the engine's tokenizer so every agent's figures mean the same thing.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;

use crate::tokens::TokenCounter;

/// One file's share of a request, or of the whole session.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FileCost {
    /// The file, as the agent named it (absolute where the agent's record is).
    pub path: PathBuf,
    /// The bytes of the file's texts present (the wrapper the agent puts around each one
    /// included, as the profile's doc defines).
    pub bytes: u64,
    /// The same texts in the counter's tokens.
    pub tokens: u64,
}

/// One main-loop request of the session.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StepCost {
    /// The agent's own id for the request, when its record has one.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub request: String,
    /// The request is the first after a compaction: the history before it was replaced.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub after_compaction: bool,
    /// Every rule-like file present in the request, by path.
    pub files: Vec<FileCost>,
    /// Why files joined or left the request since the one before, with the rule behind each
    /// (`explain --session`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub why: Vec<StepWhy>,
}

/// Why a file joined or left a step.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StepWhy {
    /// The file.
    pub path: PathBuf,
    /// The rule id behind it.
    pub rule: &'static str,
    /// One sentence that cites it.
    pub reason: String,
}

/// What one change to one file would have saved over the session.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Saving {
    /// The file.
    pub path: PathBuf,
    /// The change, in the agent's terms (`paths: src/**`).
    pub change: String,
    /// Bytes the session would not have sent.
    pub bytes: u64,
    /// The same, in tokens.
    pub tokens: u64,
    /// How the figure is computed, in one sentence.
    pub how: String,
}

/// `session rules`: every step's rule-like files, the totals and the savings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SessionCosts {
    /// The tokenizer the token figures come from.
    pub tokenizer: String,
    /// Every main-loop request, in order.
    pub steps: Vec<StepCost>,
    /// Each file summed over every step, largest first.
    pub total: Vec<FileCost>,
    /// What scoping or moving a file would save, largest first.
    pub savings: Vec<Saving>,
    /// What the figures take into account and what they leave out.
    pub notes: Vec<String>,
}

/// One text of one file, as the agent sent it (with its wrapper).
pub type TextId = usize;
/// A file, by its index in [`SessionOccurrences::paths`].
pub type PathId = usize;

/// What a profile reads off a session record: which texts were present in each step. Plain
/// data without tokens, so a salsa query can return it and the counting happens once, here.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct SessionOccurrences {
    /// Every rule-like file, by [`PathId`].
    pub paths: Vec<PathBuf>,
    /// Every distinct text, by [`TextId`]: each is counted once.
    pub texts: Vec<Arc<str>>,
    /// The steps, in order.
    pub steps: Vec<StepOccurrences>,
    /// Savings, as the steps where a file would have been absent.
    pub savings: Vec<SavingSteps>,
    /// Notes for the reader.
    pub notes: Vec<String>,
}

/// One step's texts: `(file, text, how many times the text is in the request)`, sorted.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct StepOccurrences {
    /// The agent's id for the request.
    pub request: String,
    /// The first request after a compaction.
    pub after_compaction: bool,
    /// `(file, text, count)`, sorted by file then text.
    pub present: Vec<(PathId, TextId, u32)>,
    /// Why files joined or left since the step before: `(file, rule, reason)`.
    pub why: Vec<(PathId, &'static str, String)>,
}

/// A saving: the file would have been absent from the steps in `absent`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SavingSteps {
    /// The file.
    pub path: PathId,
    /// The change, in the agent's terms.
    pub change: String,
    /// Ranges of step indexes (0-based, end exclusive) where the file would not be sent.
    pub absent: Vec<Range<usize>>,
    /// How the figure is computed.
    pub how: String,
}

/// For a file sent in every request, scoped instead to one top-level folder of `cwd` (a
/// rule's `paths:`, a folder's own rules file): each folder the session read or wrote under,
/// largest saving first, with the steps the file would have been absent from. `touches` are
/// the files read or written with the first step that carried the result; `after_compaction`
/// marks, per step, the first request after a compaction, which drops what a read attached.
pub fn scoped_absences(
    cwd: &std::path::Path,
    touches: &[(PathBuf, usize)],
    after_compaction: &[bool],
) -> Vec<(String, Vec<Range<usize>>)> {
    let mut folders: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (file, at) in touches {
        let Ok(relative) = file.strip_prefix(cwd) else { continue };
        let mut parts = relative.components();
        if let (Some(std::path::Component::Normal(first)), Some(_)) = (parts.next(), parts.next()) {
            folders.entry(first.to_string_lossy().into_owned()).or_default().push(*at);
        }
    }
    let mut absent: Vec<(String, Vec<Range<usize>>)> = folders
        .into_iter()
        .map(|(folder, touches)| (folder, absent_steps(&touches, after_compaction)))
        .collect();
    absent.sort_by_key(|(_, ranges)| {
        std::cmp::Reverse(ranges.iter().map(ExactSizeIterator::len).sum::<usize>())
    });
    absent
}

/// The steps a file attached on a touch would not be in: before the first touch, and from
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

/// Paths and texts by id, for a profile building [`SessionOccurrences`]: each distinct text
/// is stored (and later counted) once, however many requests carry it.
#[derive(Debug, Default)]
pub struct Interner {
    /// Every path, by [`PathId`].
    pub paths: Vec<PathBuf>,
    /// Every text, by [`TextId`].
    pub texts: Vec<Arc<str>>,
    path_ids: HashMap<PathBuf, PathId>,
    text_ids: HashMap<Arc<str>, TextId>,
}

impl Interner {
    /// The id of `path`, new or known.
    pub fn path(&mut self, path: PathBuf) -> PathId {
        let next = self.paths.len();
        *self.path_ids.entry(path).or_insert_with_key(|path| {
            self.paths.push(path.clone());
            next
        })
    }

    /// The id of `text`, new or known.
    pub fn text(&mut self, text: &str) -> TextId {
        if let Some(&id) = self.text_ids.get(text) {
            return id;
        }
        let id = self.texts.len();
        let text: Arc<str> = Arc::from(text);
        self.texts.push(text.clone());
        self.text_ids.insert(text, id);
        id
    }
}

/// The session record in `file` as text, or why it is none: unreadable, or not UTF-8 (with
/// the line the first bad byte is on). Every profile's reader starts here.
pub fn record_text(db: &dyn crate::Db, file: crate::files::File) -> Result<&str, SessionFileError> {
    let bytes = crate::files::file_bytes(db, file)
        .as_ref()
        .map_err(|e| SessionFileError::new(db, file, None, e.to_string()))?;
    std::str::from_utf8(bytes).map_err(|e| {
        let line = memchr::memchr_iter(b'\n', &bytes[..e.valid_up_to()]).count() + 1;
        SessionFileError::new(db, file, Some(line), "not UTF-8".to_owned())
    })
}

/// Why a session record cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, Hash, thiserror::Error)]
#[error("{}{}: {message}", source_name, line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct SessionFileError {
    /// The file, as given.
    pub source_name: String,
    /// The 1-based line the problem is on, for line-based records.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl SessionFileError {
    /// What is wrong with `file`, at `line` when one is to blame.
    pub fn new(db: &dyn crate::Db, file: crate::files::File, line: Option<usize>, message: String) -> Self {
        SessionFileError { source_name: crate::path::display(file.path(db)), line, message }
    }
}

impl SessionOccurrences {
    /// Counts every text once with `counter`, and sums the steps, totals and savings.
    pub fn costs(&self, counter: &dyn TokenCounter) -> SessionCosts {
        let tokens: Vec<u64> = self.texts.iter().map(|t| counter.count(t) as u64).collect();
        let bytes: Vec<u64> = self.texts.iter().map(|t| t.len() as u64).collect();
        let mut total: BTreeMap<PathId, (u64, u64)> = BTreeMap::new();
        // Each file's (bytes, tokens) per step, for the savings.
        let mut per_file: BTreeMap<PathId, Vec<(u64, u64)>> = BTreeMap::new();
        let saved: std::collections::BTreeSet<PathId> = self.savings.iter().map(|s| s.path).collect();
        let mut steps = Vec::with_capacity(self.steps.len());
        for (index, step) in self.steps.iter().enumerate() {
            let mut files: Vec<FileCost> = Vec::new();
            let mut current: Option<(PathId, u64, u64)> = None;
            let mut flush = |entry: Option<(PathId, u64, u64)>, files: &mut Vec<FileCost>| {
                if let Some((path, b, t)) = entry {
                    let sum = total.entry(path).or_default();
                    sum.0 += b;
                    sum.1 += t;
                    if saved.contains(&path) {
                        let series = per_file.entry(path).or_default();
                        series.resize(index, (0, 0));
                        series.push((b, t));
                    }
                    files.push(FileCost { path: self.paths[path].clone(), bytes: b, tokens: t });
                }
            };
            for &(path, text, count) in &step.present {
                let (b, t) = (bytes[text] * u64::from(count), tokens[text] * u64::from(count));
                match &mut current {
                    Some((p, sb, st)) if *p == path => {
                        *sb += b;
                        *st += t;
                    }
                    _ => {
                        flush(current.take(), &mut files);
                        current = Some((path, b, t));
                    }
                }
            }
            flush(current.take(), &mut files);
            let why = step
                .why
                .iter()
                .map(|(path, rule, reason)| StepWhy {
                    path: self.paths[*path].clone(),
                    rule,
                    reason: reason.clone(),
                })
                .collect();
            steps.push(StepCost {
                request: step.request.clone(),
                after_compaction: step.after_compaction,
                files,
                why,
            });
        }
        let mut total: Vec<FileCost> = total
            .into_iter()
            .map(|(path, (bytes, tokens))| FileCost { path: self.paths[path].clone(), bytes, tokens })
            .collect();
        total.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.path.cmp(&b.path)));
        let mut savings: Vec<Saving> = self
            .savings
            .iter()
            .map(|saving| {
                let series = per_file.get(&saving.path).map(Vec::as_slice).unwrap_or_default();
                let (mut bytes, mut tokens) = (0, 0);
                for range in &saving.absent {
                    let within = range.start.min(series.len())..range.end.min(series.len());
                    for &(b, t) in &series[within] {
                        bytes += b;
                        tokens += t;
                    }
                }
                Saving {
                    path: self.paths[saving.path].clone(),
                    change: saving.change.clone(),
                    bytes,
                    tokens,
                    how: saving.how.clone(),
                }
            })
            .collect();
        savings.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.path.cmp(&b.path)));
        SessionCosts {
            tokenizer: counter.name().to_owned(),
            steps,
            total,
            savings,
            notes: self.notes.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::BytesPerFour;

    #[test]
    fn a_compaction_drops_what_a_touch_attached() {
        let compacted = [false, false, false, true, false, false];
        assert_eq!(absent_steps(&[1], &compacted), vec![0..1, 3..6]);
        assert_eq!(absent_steps(&[1, 4], &compacted), vec![0..1, 3..4]);
        let touches = [("/p/a/x".into(), 1), ("/p/b/y".into(), 4), ("/p/top".into(), 0)];
        let folders = scoped_absences(std::path::Path::new("/p"), &touches, &compacted);
        let b: Vec<Range<usize>> = std::iter::once(0..4).collect();
        assert_eq!(folders, vec![("a".to_owned(), vec![0..1, 3..6]), ("b".to_owned(), b)]);
    }

    #[test]
    fn costs_sum_each_files_texts_per_step_and_over_the_session() {
        let occurrences = SessionOccurrences {
            paths: vec!["/p/CLAUDE.md".into(), "/p/a/CLAUDE.md".into()],
            texts: vec!["abcdefgh".into(), "xyz".into()],
            steps: vec![
                StepOccurrences {
                    request: "r1".into(),
                    after_compaction: false,
                    present: vec![(0, 0, 1)],
                    why: vec![],
                },
                StepOccurrences {
                    request: "r2".into(),
                    after_compaction: false,
                    present: vec![(0, 0, 1), (1, 1, 2)],
                    why: vec![(1, "CC11", "attached".into())],
                },
            ],
            savings: vec![SavingSteps {
                path: 0,
                change: "paths: a/**".into(),
                absent: vec![0..1, 5..9],
                how: "h".into(),
            }],
            notes: vec![],
        };
        let costs = occurrences.costs(&BytesPerFour);
        assert_eq!(costs.steps[1].files[1], FileCost { path: "/p/a/CLAUDE.md".into(), bytes: 6, tokens: 2 });
        assert_eq!(costs.total[0], FileCost { path: "/p/CLAUDE.md".into(), bytes: 16, tokens: 4 });
        assert_eq!((costs.savings[0].bytes, costs.savings[0].tokens), (8, 2));
    }
}
