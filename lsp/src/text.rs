//! Positions in an open document: LSP counts UTF-16 code units from 0, ctxgraph's findings
//! count lines from 1 and columns in characters (or, for opencode's JSONC errors, UTF-16).

use lsp_types::{Position, Range};

/// What a 1-based column counts: the query layer's one type for it.
pub use ctxgraph_engine::answers::fault::Column;

/// Line `line` (0-based) of `text`, without its line break; empty past the end.
pub fn line_text(text: &str, line: usize) -> &str {
    let line = text.split('\n').nth(line).unwrap_or("");
    line.strip_suffix('\r').unwrap_or(line)
}

fn utf16_len(text: &str) -> u32 {
    u32::try_from(text.encode_utf16().count()).unwrap_or(u32::MAX)
}

fn lsp_line(line: usize) -> u32 {
    u32::try_from(line).unwrap_or(u32::MAX)
}

/// The LSP position of byte `offset` in `text` (clamped to a character boundary before it).
pub fn position_of(text: &str, offset: usize) -> Position {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count();
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    Position { line: lsp_line(line), character: utf16_len(&text[line_start..offset]) }
}

/// The byte offset of an LSP position, or `None` past the end of its line.
pub fn offset_of(text: &str, position: Position) -> Option<usize> {
    let mut line_start = 0;
    for _ in 0..position.line {
        line_start += text[line_start..].find('\n')? + 1;
    }
    let line = &text[line_start..];
    let line = &line[..line.find('\n').unwrap_or(line.len())];
    let mut units = 0;
    for (at, ch) in line.char_indices() {
        if units >= position.character {
            return Some(line_start + at);
        }
        units += u32::try_from(ch.len_utf16()).unwrap_or(2);
    }
    (units >= position.character).then_some(line_start + line.len())
}

/// The byte range `start..end` of `text` as an LSP range.
pub fn range_of(text: &str, start: usize, end: usize) -> Range {
    Range { start: position_of(text, start), end: position_of(text, end) }
}

/// Where a finding at 1-based `line` and `column` points in `text`: from the column to the
/// end of the token there (a whole string literal when it starts with a quote); the line's
/// text without its indentation when there is no column; the first line when there is no
/// line either (a finding about the whole file).
pub fn finding_range(text: &str, line: Option<usize>, column: Option<usize>, unit: Column) -> Range {
    let index = line.map_or(0, |line| line.saturating_sub(1));
    let content = line_text(text, index);
    let start = match column {
        Some(column) => column_offset(content, column.saturating_sub(1), unit),
        None => content.len() - content.trim_start().len(),
    };
    let end = if column.is_some() { token_end(content, start) } else { content.trim_end().len().max(start) };
    let at = |offset: usize| Position { line: lsp_line(index), character: utf16_len(&content[..offset]) };
    Range { start: at(start), end: at(end) }
}

/// The byte offset in `line` of a 0-based column counted in `unit`; the line's end past it.
fn column_offset(line: &str, column: usize, unit: Column) -> usize {
    let mut counted = 0;
    for (at, ch) in line.char_indices() {
        if counted >= column {
            return at;
        }
        counted += match unit {
            Column::Chars => 1,
            Column::Utf16 => ch.len_utf16(),
        };
    }
    line.len()
}

/// The end of the token starting at `start`: past the closing quote of a string literal,
/// else at the first space or punctuation that ends a word; the line's end when the token
/// would be empty (a finding at a line's last character still underlines something).
fn token_end(line: &str, start: usize) -> usize {
    let rest = &line[start..];
    let length = if let Some(body) = rest.strip_prefix('"') {
        let mut escaped = false;
        body.char_indices()
            .find(|&(_, ch)| {
                let closes = ch == '"' && !escaped;
                escaped = ch == '\\' && !escaped;
                closes
            })
            .map_or(rest.len(), |(at, _)| at + 2)
    } else {
        rest.find(|ch: char| ch.is_whitespace() || ",;)]}>".contains(ch)).unwrap_or(rest.len())
    };
    if length == 0 { line.trim_end().len().max(start) } else { start + length }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(start: (u32, u32), end: (u32, u32)) -> Range {
        Range { start: Position::new(start.0, start.1), end: Position::new(end.0, end.1) }
    }

    #[test]
    fn a_column_underlines_the_token_or_string_it_starts() {
        let text = "{\n  \"instructions\": [\"docs/*.md\", \"x\"],\n}\n";
        assert_eq!(finding_range(text, Some(2), Some(20), Column::Chars), range((1, 19), (1, 30)));
        let text = "key: sk-abcdef0123 and more\n";
        assert_eq!(finding_range(text, Some(1), Some(6), Column::Chars), range((0, 5), (0, 18)));
    }

    #[test]
    fn a_line_alone_underlines_its_text_and_no_line_the_first() {
        let text = "# Title\n\n   - never push  \n";
        assert_eq!(finding_range(text, Some(3), None, Column::Chars), range((2, 3), (2, 15)));
        assert_eq!(finding_range(text, None, None, Column::Chars), range((0, 0), (0, 7)));
    }

    #[test]
    fn columns_count_in_their_unit_and_positions_in_utf16() {
        // "é" is one char and one UTF-16 unit; "😀" is one char and two units.
        let text = "😀é \"x\"\n";
        assert_eq!(finding_range(text, Some(1), Some(4), Column::Chars), range((0, 4), (0, 7)));
        assert_eq!(finding_range(text, Some(1), Some(5), Column::Utf16), range((0, 4), (0, 7)));
        assert_eq!(position_of(text, text.find('"').unwrap_or(0)), Position::new(0, 4));
        assert_eq!(offset_of(text, Position::new(0, 4)), text.find('"'));
        assert_eq!(offset_of(text, Position::new(0, 99)), None);
        assert_eq!(offset_of(text, Position::new(1, 0)), Some(text.len()));
    }
}
