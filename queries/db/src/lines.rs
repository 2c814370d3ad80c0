//! Byte offsets to 1-based lines and columns: the one place positions in a text are computed.
//!
//! Two column units exist on purpose. Where ctxgraph reproduces a position opencode prints
//! (JSONC errors, substitution errors), columns count UTF-16 code units, as JavaScript
//! does; everywhere else they count characters. Lines end at `\n` only, as in opencode.

use line_index::{LineCol, LineIndex, TextSize, WideEncoding};
use serde::Serialize;

/// A 1-based line and column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct LineColumn {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, counted as the caller's [`Column`] says.
    pub column: usize,
}

/// What a column counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Column {
    /// UTF-16 code units, as opencode (JavaScript) counts them.
    Utf16,
    /// Unicode scalar values.
    Chars,
}

/// A text with its line starts indexed (`line-index`, rust-analyzer's), so that many
/// lookups in one text cost a binary search each.
pub struct Lines<'a> {
    text: &'a str,
    index: LineIndex,
}

impl<'a> Lines<'a> {
    /// Indexes `text`'s line starts.
    pub fn new(text: &'a str) -> Self {
        // `line-index` counts in u32; no text ctxgraph reads comes near 4 GiB (reads are
        // capped well below), but positions past that would clamp rather than panic.
        let indexed = floor_char_boundary(text, text.len().min(u32::MAX as usize));
        let text = &text[..indexed];
        Lines { text, index: LineIndex::new(text) }
    }

    /// The line and column of `offset`; an offset past the end or inside a character
    /// counts as the character boundary before it.
    pub fn locate(&self, offset: usize, unit: Column) -> LineColumn {
        let offset = floor_char_boundary(self.text, offset.min(self.text.len()));
        let at = TextSize::try_from(offset).unwrap_or_default();
        let utf8 = self.index.try_line_col(at).unwrap_or(LineCol { line: 0, col: 0 });
        let encoding = match unit {
            Column::Utf16 => WideEncoding::Utf16,
            Column::Chars => WideEncoding::Utf32,
        };
        let column = self.index.to_wide(encoding, utf8).map_or(utf8.col, |wide| wide.col);
        LineColumn { line: utf8.line as usize + 1, column: column as usize + 1 }
    }

    /// The text of 1-based `line`, without its `\n`; empty past the last line.
    pub fn line_text(&self, line: usize) -> &'a str {
        let Some(range) =
            line.checked_sub(1).and_then(|l| u32::try_from(l).ok()).and_then(|l| self.index.line(l))
        else {
            return "";
        };
        let text = &self.text[usize::from(range.start())..usize::from(range.end())];
        text.strip_suffix('\n').unwrap_or(text)
    }
}

/// The largest character boundary of `text` at or before `offset` (`offset` ≤ `text.len()`).
pub fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_utf16_units_or_characters() {
        // "😀" is one character, two UTF-16 units, four bytes.
        let text = "ab\n😀é x\n";
        let lines = Lines::new(text);
        let x = text.find('x').unwrap();
        assert_eq!(lines.locate(x, Column::Utf16), LineColumn { line: 2, column: 5 });
        assert_eq!(lines.locate(x, Column::Chars), LineColumn { line: 2, column: 4 });
        assert_eq!(lines.line_text(2), "😀é x");
        assert_eq!(lines.line_text(3), "");
        assert_eq!(lines.line_text(9), "");
    }

    #[test]
    fn offsets_inside_a_character_or_past_the_end_clamp() {
        let text = "é\nz";
        let lines = Lines::new(text);
        assert_eq!(lines.locate(1, Column::Chars), LineColumn { line: 1, column: 1 });
        assert_eq!(lines.locate(99, Column::Chars), LineColumn { line: 2, column: 2 });
        assert_eq!(lines.locate(0, Column::Utf16), LineColumn { line: 1, column: 1 });
    }

    #[test]
    fn a_carriage_return_is_part_of_the_line() {
        let lines = Lines::new("a\r\nb");
        assert_eq!(lines.line_text(1), "a\r");
        assert_eq!(lines.locate(3, Column::Chars), LineColumn { line: 2, column: 1 });
    }
}
