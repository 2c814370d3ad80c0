//! CC41: the texts of rule-like files in one message as Claude Code sent it. Three forms,
//! each found by its own markers, so nothing outside them is attributed to a file:
//!
//! - the first message's rule-file block (CC2): each entry `Contents of P (label):\n\nT`,
//!   in a text block that starts with `<system-reminder>\n`; the block's preamble and the
//!   blank lines between entries belong to no file;
//! - an attachment (CC11): the whole `<system-reminder>\nContents of P:\n\nT\n\n</system-reminder>`;
//! - a changed-on-disk note about a rule-like file (CC42): the whole
//!   `<system-reminder>\nNote: P changed on disk…\n</system-reminder>`, which carries the
//!   file's changed lines.

use std::collections::HashMap;

use memchr::memmem;

const OPEN: &str = "<system-reminder>\n";
const CLOSE: &str = "\n</system-reminder>";
const CONTENTS: &str = "Contents of ";
const NOTE: &str = "Note: ";
const CHANGED: &str = " changed on disk";

/// One text of one file found in a message: the path as written, and the byte range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// The path, as the message names it.
    pub path: String,
    /// Where the file's text (with its wrapper) is in the string scanned.
    pub range: std::ops::Range<usize>,
    /// An entry of the first message's rule-file block (sent whatever the session reads).
    pub entry: bool,
}

/// What the transcript's records say about the texts to look for.
pub struct Known<'a> {
    /// The rule-file block's files as the `instructions` records list them (path → text),
    /// which pins where an entry's text ends.
    pub entries: &'a HashMap<String, String>,
    /// Whole text blocks that are a skill's or command's body (CC45): text → its name.
    pub bodies: &'a HashMap<String, String>,
    /// The output styles in force, by name (CC45).
    pub styles: &'a [String],
    /// Whether a changed file is rule-like.
    pub is_rule: &'a dyn Fn(&str) -> bool,
}

/// Every rule-like text in `text`.
pub fn scan(text: &str, known: &Known<'_>) -> Vec<Found> {
    let mut found = Vec::new();
    if let Some(name) = known.bodies.get(text) {
        return vec![Found { path: name.clone(), range: 0..text.len(), entry: false }];
    }
    for style in known.styles {
        for marker in
            [format!("{OPEN}# Output Style: {style}\n"), format!("{OPEN}{style} output style is active")]
        {
            for at in memmem::find_iter(text.as_bytes(), marker.as_bytes()) {
                if let Some(end) = text[at..].find(CLOSE) {
                    let range = at..at + end + CLOSE.len();
                    found.push(Found { path: format!("(output style {style})"), range, entry: false });
                }
            }
        }
    }
    let (entries, is_rule) = (known.entries, known.is_rule);
    let block = text.starts_with(OPEN);
    for at in memmem::find_iter(text.as_bytes(), CONTENTS) {
        let attached = at >= OPEN.len() && text[..at].ends_with(OPEN);
        let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
        let line = &text[at + CONTENTS.len()..line_end];
        if !text[line_end..].starts_with("\n\n") {
            continue;
        }
        let body = line_end + 2;
        if attached && let Some(path) = line.strip_suffix(':') {
            // The attachment form: the whole reminder.
            if let Some(end) = text[body..].find("\n\n</system-reminder>") {
                let end = body + end + "\n\n</system-reminder>".len();
                found.push(Found { path: path.to_owned(), range: at - OPEN.len()..end, entry: false });
            }
        } else if block && let Some(head) = line.strip_suffix("):") {
            // An entry of the first message's block: `P (label):`; labels hold no " (".
            let Some(cut) = head.rfind(" (") else { continue };
            let path = &head[..cut];
            let end = if let Some(known) = entries.get(path).filter(|t| text[body..].starts_with(t.as_str()))
            {
                body + known.len()
            } else {
                let next = text[body..].find("\n\nContents of ").map(|i| body + i);
                let close = text[body..].find(CLOSE).map(|i| body + i);
                next.into_iter().chain(close).min().unwrap_or(text.len())
            };
            found.push(Found { path: path.to_owned(), range: at..end, entry: true });
        }
    }
    let note = format!("{OPEN}{NOTE}");
    for at in memmem::find_iter(text.as_bytes(), note.as_bytes()) {
        let start = at + note.len();
        let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
        let Some(cut) = text[start..line_end].find(CHANGED) else { continue };
        let path = &text[start..start + cut];
        if !is_rule(path) {
            continue;
        }
        let Some(end) = text[start..].find(CLOSE) else { continue };
        found.push(Found { path: path.to_owned(), range: at..start + end + CLOSE.len(), entry: false });
    }
    found.sort_by_key(|f| f.range.start);
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(_: &str) -> bool {
        true
    }

    fn scan(text: &str, entries: &HashMap<String, String>, is_rule: &dyn Fn(&str) -> bool) -> Vec<Found> {
        let bodies = HashMap::new();
        super::scan(text, &Known { entries, bodies: &bodies, styles: &[], is_rule })
    }

    #[test]
    fn a_body_is_a_whole_block_and_a_style_each_of_its_reminders() {
        let bodies = HashMap::from([("Say hi. X\n".to_owned(), "(skill hi)".to_owned())]);
        let styles = ["Terse".to_owned()];
        let known = Known { entries: &HashMap::new(), bodies: &bodies, styles: &styles, is_rule: &all };
        assert_eq!(super::scan("Say hi. X\n", &known)[0].range, 0..10);
        let text = "r\n\n<system-reminder>\nTerse output style is active. Z\n</system-reminder>";
        let found = super::scan(text, &known);
        assert_eq!(
            (found[0].path.as_str(), &text[found[0].range.clone()]),
            ("(output style Terse)", &text[3..])
        );
    }

    #[test]
    fn an_entry_ends_where_the_instructions_record_says() {
        let text = "<system-reminder>\nPREAMBLE\n\nContents of /p/CLAUDE.md (L):\n\nroot\n\nContents of x\n\nContents of /p/b.md (L2):\n\nb\n</system-reminder>";
        let entries = HashMap::from([("/p/CLAUDE.md".to_owned(), "root\n\nContents of x".to_owned())]);
        let found = scan(text, &entries, &all);
        let texts: Vec<(&str, &str)> =
            found.iter().map(|f| (f.path.as_str(), &text[f.range.clone()])).collect();
        assert_eq!(
            texts,
            [
                ("/p/CLAUDE.md", "Contents of /p/CLAUDE.md (L):\n\nroot\n\nContents of x"),
                ("/p/b.md", "Contents of /p/b.md (L2):\n\nb"),
            ]
        );
    }

    #[test]
    fn an_attachment_and_a_note_are_whole_reminders() {
        let text = "1\tx\n\n<system-reminder>\nContents of /p/a/CLAUDE.md:\n\nA\n\n</system-reminder>\n\n<system-reminder>\nNote: /p/a/CLAUDE.md changed on disk. Lines:\n1\tA\n</system-reminder>";
        let found = scan(text, &HashMap::new(), &all);
        assert_eq!(found.len(), 2);
        assert_eq!(
            &text[found[0].range.clone()],
            "<system-reminder>\nContents of /p/a/CLAUDE.md:\n\nA\n\n</system-reminder>"
        );
        assert_eq!(
            &text[found[1].range.clone()],
            "<system-reminder>\nNote: /p/a/CLAUDE.md changed on disk. Lines:\n1\tA\n</system-reminder>"
        );
        assert!(
            scan(text, &HashMap::new(), &|_| false).len() == 1,
            "a note about another file is not a rule's"
        );
    }

    #[test]
    fn contents_in_a_files_lines_is_not_an_entry() {
        let text = "1\tContents of /p/x (y):\n\nz";
        assert!(scan(text, &HashMap::new(), &all).is_empty());
    }
}
