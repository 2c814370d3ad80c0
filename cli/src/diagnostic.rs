//! Errors at a position in a source text, drawn as rustc and ruff draw them
//! (`annotate-snippets`): the message, `--> source:line:column`, the line and a caret.
//!
//! The line shown is a bounded window around the column, so a 10 MB minified config or a
//! 100k-deep nesting prints a few hundred bytes, never the whole line. Messages and lines
//! pass through the secrets table first: a key in a broken config is shown as
//! `[REDACTED:<kind>]`, the caret moved with the text.

use ctxgraph_db::lines::floor_char_boundary;
use std::ops::Range;

use annotate_snippets::{AnnotationKind, Group, Level, Origin, Renderer, Snippet};
use ctxgraph_db::lines::Column;
use ctxgraph_db::secrets;

/// Characters of context kept on each side of the column.
const CONTEXT_CHARS: usize = 60;
/// What marks the side of a line that was cut.
const CUT: &str = "…";

/// A message about one place in a text.
pub struct Diagnostic<'a> {
    pub message: &'a str,
    /// The file (or source name) the text came from.
    pub source: &'a str,
    /// The source text around the place: here, always one whole line.
    pub text: &'a str,
    /// The 1-based number of `text`'s first line.
    pub line: usize,
    /// The place, as a byte range in `text`.
    pub range: Range<usize>,
    /// The column printed after `line:`, as the producer counts it (opencode's positions
    /// count UTF-16 units).
    pub column: usize,
}

impl Diagnostic<'_> {
    /// `error: …` and the snippet, with ANSI styles (the caller's stream strips them when
    /// colour is off).
    pub fn render(&self) -> String {
        // Redacted before it is cut: a window may start inside a key, past what shows it is one.
        let (line, range) = redact_line(self.text.trim_end_matches('\r'), self.range.clone());
        let (window, range) = window(&line, range);
        let message = secrets::redact(self.message).0;
        // The location is given, not computed from the snippet: the snippet is a window of
        // the line, and the column is counted the producer's way.
        let report = [
            Group::with_title(Level::ERROR.primary_title(&*message))
                .element(Origin::path(self.source).line(self.line).char_column(self.column)),
            Group::with_level(Level::ERROR).element(
                Snippet::source(window.as_str())
                    .line_start(self.line)
                    .annotation(AnnotationKind::Primary.span(range)),
            ),
        ];
        Renderer::styled().render(&report)
    }
}

/// `error: message`, styled like the diagnostics with a snippet.
pub fn error_line(message: &str) -> String {
    let message = secrets::redact(message).0;
    Renderer::styled().render(&[Group::with_title(Level::ERROR.primary_title(&*message))])
}

/// `line` with its secrets redacted, and `range` moved with the text (a position inside a
/// secret moves to the start of its replacement).
pub fn redact_line(line: &str, range: Range<usize>) -> (String, Range<usize>) {
    let (redacted, spans) = secrets::redact(line);
    let moved = |at: usize| {
        // Bytes of the line replaced before `at`, and what replaced them.
        let (mut removed, mut added) = (0, 0);
        for span in &spans {
            if at < span.range.end {
                if at > span.range.start {
                    return span.range.start - removed + added;
                }
                break;
            }
            removed += span.range.len();
            added += "[REDACTED:]".len() + span.pattern.id.len();
        }
        at - removed + added
    };
    let start = moved(range.start);
    (redacted.into_owned(), start..moved(range.end).max(start))
}

/// Byte offset in the line `text` of the 1-based `column` (past the end: the end).
pub fn column_offset(text: &str, column: usize, unit: Column) -> usize {
    let mut counted = 0;
    for (offset, c) in text.char_indices() {
        if counted + 1 >= column {
            return offset;
        }
        counted += match unit {
            Column::Utf16 => c.len_utf16(),
            Column::Chars => 1,
        };
    }
    text.len()
}

/// At most [`CONTEXT_CHARS`] characters each side of `range.start` (and of the range's
/// end, for a short range), with [`CUT`] where the line goes on; the range moved into the
/// window.
pub fn window(text: &str, range: Range<usize>) -> (String, Range<usize>) {
    let start = floor_char_boundary(text, range.start.min(text.len()));
    let end = floor_char_boundary(text, range.end.clamp(start, text.len()));
    let from = text[..start].char_indices().rev().nth(CONTEXT_CHARS - 1).map_or(0, |(i, _)| i);
    let end = text[start..end].char_indices().nth(CONTEXT_CHARS).map_or(end, |(i, _)| start + i);
    let to = text[end..].char_indices().nth(CONTEXT_CHARS).map_or(text.len(), |(i, _)| end + i);
    let mut window = String::with_capacity(to - from + 2 * CUT.len());
    if from > 0 {
        window.push_str(CUT);
    }
    let shift = window.len();
    window.push_str(&text[from..to]);
    if to < text.len() {
        window.push_str(CUT);
    }
    (window, start - from + shift..end - from + shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_line_is_kept_whole() {
        assert_eq!(window("{\"a\": 1 \"b\"}", 8..8), ("{\"a\": 1 \"b\"}".to_owned(), 8..8));
    }

    #[test]
    fn a_long_line_is_cut_around_the_place_on_both_sides() {
        let text = format!("{}X{}", "a".repeat(10_000), "b".repeat(10_000));
        let (window, range) = window(&text, 10_000..10_001);
        assert_eq!(&window[range.clone()], "X");
        assert_eq!(window.chars().count(), CONTEXT_CHARS * 2 + 1 + 2);
        assert!(window.starts_with(CUT) && window.ends_with(CUT));
    }

    #[test]
    fn a_secret_in_the_line_is_redacted_and_the_caret_follows() {
        let key = format!("AKIA{}", "Q".repeat(16));
        let line = format!(r#"{{"k": "{key}"}} "x": 1}}"#);
        let at = line.find(" \"x\"").expect("place");
        let (shown, range) = redact_line(&line, at..at + 1);
        assert_eq!(shown, r#"{"k": "[REDACTED:aws_key]"} "x": 1}"#);
        assert_eq!(&shown[range.clone()], " ");
        assert_eq!(&shown[..range.start], r#"{"k": "[REDACTED:aws_key]"}"#);
        // A place inside the secret points at its replacement.
        let inside = line.find(&key).expect("key") + 3;
        let (shown, range) = redact_line(&line, inside..inside + 1);
        assert!(shown[range.start..].starts_with("[REDACTED:aws_key]"), "{shown} {range:?}");
    }

    #[test]
    fn columns_map_to_byte_offsets() {
        // "😀" is two UTF-16 units, one character and four bytes.
        assert_eq!(column_offset("😀éx", 4, Column::Utf16), "😀é".len());
        assert_eq!(column_offset("😀éx", 3, Column::Chars), "😀é".len());
        assert_eq!(column_offset("ab", 1, Column::Utf16), 0);
        assert_eq!(column_offset("ab", 99, Column::Chars), 2);
    }
}
