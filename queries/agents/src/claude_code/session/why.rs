//! `explain --session`: why each rule-like text joined a request, or a file left it, read off
//! the text's own form (CC41) and the tool calls whose results the request carried.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use ctxgraph_db::session_costs::{PathId, TextId};

/// What one step gained and lost against the step before: `(file, rule, reason)`.
pub fn why(
    before: &[(PathId, TextId, u32)],
    now: &[(PathId, TextId, u32)],
    texts: &[Arc<str>],
    after_compaction: bool,
    touched: &[&PathBuf],
) -> Vec<(PathId, &'static str, String)> {
    let had: BTreeSet<(PathId, TextId)> = before.iter().map(|&(p, t, _)| (p, t)).collect();
    let mut out = Vec::new();
    for &(path, text, _) in now {
        if had.contains(&(path, text)) {
            continue;
        }
        let (rule, reason) = kind(&texts[text], after_compaction, touched);
        out.push((path, rule, reason));
    }
    let paths_now: BTreeSet<PathId> = now.iter().map(|&(p, _, _)| p).collect();
    let gone: BTreeSet<PathId> =
        before.iter().map(|&(p, _, _)| p).filter(|p| !paths_now.contains(p)).collect();
    for path in gone {
        out.push(if after_compaction {
            (path, "CC43", "dropped: the compaction replaced the history that carried it (CC43)".to_owned())
        } else {
            (path, "CC40", "no longer in the request: the history it was in was not kept (CC40)".to_owned())
        });
    }
    out
}

fn kind(text: &str, after_compaction: bool, touched: &[&PathBuf]) -> (&'static str, String) {
    if text.starts_with("Contents of ") {
        if after_compaction {
            return (
                "CC43",
                "in the first message's rule-file block, sent again after the compaction (CC43)".to_owned(),
            );
        }
        return (
            "CC41",
            "in the first message's rule-file block, re-sent with every request (CC2, CC41)".to_owned(),
        );
    }
    if text.starts_with("<system-reminder>\nContents of ") {
        let files: Vec<String> = touched.iter().map(|f| ctxgraph_db::path::display(f)).collect();
        return match files.as_slice() {
            [] => ("CC11", "attached to a tool's result (CC11)".to_owned()),
            _ => (
                "CC11",
                format!("attached to the result of the Read or Write of {} (CC11)", files.join(", ")),
            ),
        };
    }
    if text.starts_with("<system-reminder>\nNote: ") {
        return ("CC42", "changed on disk: a tool result re-sends its changed lines (CC42)".to_owned());
    }
    if text.starts_with("<system-reminder>\n") {
        return (
            "CC45",
            "the output style: its body in the first message, its reminder after every tool result (CC45)"
                .to_owned(),
        );
    }
    ("CC45", "the body of a skill or command the model invoked (CC45)".to_owned())
}
