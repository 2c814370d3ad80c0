//! What changed between a stored snapshot and a fresh build, and which sources did it.

use serde::Serialize;
use similar::TextDiff;

use crate::render::{BlockEntry, Rendered};
use crate::snapshot::Stored;

/// A difference between a snapshot and the current prompt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Change {
    /// A unified diff of the bodies (snapshot first), 3 lines of context.
    pub diff: String,
    /// The line of the snapshot file where the first difference is (1-based).
    pub line: usize,
    /// The snapshot body's token count (`o200k_base`).
    pub tokens_before: usize,
    /// The current prompt's token count (`o200k_base`).
    pub tokens_after: usize,
    /// The blocks added, removed or changed, in prompt order (removed ones last).
    pub sources: Vec<SourceChange>,
    /// The same blocks with the same text, in another order.
    pub reordered: bool,
}

impl Change {
    /// Tokens gained (positive) or saved (negative) since the snapshot.
    pub fn token_delta(&self) -> i64 {
        // Token counts are bounded by file sizes, far below `isize::MAX`.
        (self.tokens_after.cast_signed() - self.tokens_before.cast_signed()) as i64
    }
}

/// One block that differs between the snapshot and the current prompt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SourceChange {
    /// Whether the block is new, gone, or has other text.
    pub kind: SourceChangeKind,
    /// The block's id: `environment`, a rule path, or a nearby rule with the read file.
    pub source: String,
    /// Why an added or changed block is in the prompt now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl SourceChange {
    /// The rule file behind the block, relative to `<repo>`, when it is in the repository
    /// (ids are written by [`crate::render`]: a path, or `<path> (read <file>)`).
    pub fn repo_file(&self) -> Option<&str> {
        let path = self.source.strip_prefix("<repo>/")?;
        Some(path.split_once(" (read ").map_or(path, |(rule, _)| rule))
    }
}

/// How a block differs between the snapshot and the current prompt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceChangeKind {
    /// In the current prompt only.
    Added,
    /// In the snapshot only.
    Removed,
    /// In both, with different text.
    Changed,
}

impl SourceChangeKind {
    /// The word `check` prints for this kind.
    pub fn as_str(self) -> &'static str {
        match self {
            SourceChangeKind::Added => "added",
            SourceChangeKind::Removed => "removed",
            SourceChangeKind::Changed => "changed",
        }
    }
}

/// `None` when the bodies are identical.
pub fn compare(stored: &Stored, current: &Rendered, labels: (&str, &str)) -> Option<Change> {
    if stored.body == current.body {
        return None;
    }
    let diff = TextDiff::from_lines(&stored.body, &current.body);
    let first =
        diff.ops().iter().find(|op| op.tag() != similar::DiffTag::Equal).map_or(0, |op| op.old_range().start);
    let unified = diff
        .unified_diff()
        .context_radius(3)
        .missing_newline_hint(true)
        .header(labels.0, labels.1)
        .to_string();
    let sources = source_changes(&stored.blocks, &current.blocks);
    let reordered = sources.is_empty() && {
        let mut old: Vec<_> = stored.blocks.iter().map(|b| (&b.id, &b.hash)).collect();
        let mut new: Vec<_> = current.blocks.iter().map(|b| (&b.id, &b.hash)).collect();
        old.sort();
        new.sort();
        old == new && stored.blocks != current.blocks
    };
    Some(Change {
        diff: unified,
        line: stored.header_lines + first + 1,
        tokens_before: crate::count_tokens(&stored.body),
        tokens_after: crate::count_tokens(&current.body),
        sources,
        reordered,
    })
}

fn source_changes(old: &[BlockEntry], new: &[BlockEntry]) -> Vec<SourceChange> {
    let mut changes = Vec::new();
    for block in new {
        let kind = match old.iter().find(|o| o.id == block.id) {
            None => SourceChangeKind::Added,
            Some(o) if o.hash != block.hash => SourceChangeKind::Changed,
            Some(_) => continue,
        };
        changes.push(SourceChange { kind, source: block.id.clone(), reason: block.reason.clone() });
    }
    for block in old.iter().filter(|o| !new.iter().any(|n| n.id == o.id)) {
        changes.push(SourceChange {
            kind: SourceChangeKind::Removed,
            source: block.id.clone(),
            reason: None,
        });
    }
    changes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(id: &str, hash: &str) -> BlockEntry {
        BlockEntry { id: id.into(), hash: hash.into(), reason: None }
    }

    fn stored(body: &str, blocks: Vec<BlockEntry>) -> Stored {
        Stored { body: body.into(), blocks, header_lines: 10, intact: true }
    }

    #[test]
    fn sources_are_added_removed_or_changed() {
        let old = stored("env\nA\nB\n", vec![block("environment", "1"), block("a", "2"), block("b", "3")]);
        let new = Rendered {
            body: "env\nA2\nC\n".into(),
            blocks: vec![block("environment", "1"), block("a", "9"), block("c", "4")],
        };
        let change = compare(&old, &new, ("old", "new")).expect("differs");
        let summary: Vec<(SourceChangeKind, &str)> =
            change.sources.iter().map(|s| (s.kind, s.source.as_str())).collect();
        assert_eq!(
            summary,
            [
                (SourceChangeKind::Changed, "a"),
                (SourceChangeKind::Added, "c"),
                (SourceChangeKind::Removed, "b")
            ]
        );
        assert_eq!(change.line, 12, "the second body line, after a 10-line header");
        assert!(!change.reordered);
        // o200k_base: env, \n, A, \n, B, \n → 6; env, \n, A, 2, \n, C, \n → 7.
        assert_eq!((change.tokens_before, change.tokens_after, change.token_delta()), (6, 7, 1));
    }

    #[test]
    fn a_reorder_is_named_as_such() {
        let old = stored("A\nB", vec![block("a", "1"), block("b", "2")]);
        let new = Rendered { body: "B\nA".into(), blocks: vec![block("b", "2"), block("a", "1")] };
        let change = compare(&old, &new, ("old", "new")).expect("differs");
        assert!(change.sources.is_empty());
        assert!(change.reordered);
    }

    #[test]
    fn a_lost_final_newline_shows_in_the_diff() {
        let old = stored("a\n", Vec::new());
        let new = Rendered { body: "a".into(), blocks: Vec::new() };
        let change = compare(&old, &new, ("old", "new")).expect("differs");
        assert!(change.diff.contains("\\ No newline at end of file"), "{}", change.diff);
    }
}
