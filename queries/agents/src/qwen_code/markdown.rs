//! QW7: where an `@` is code to Qwen Code, so not an import.
//!
//! Qwen tokenises the file as Markdown and walks the tokens: a code block at the top level
//! is code, and so is a code span inside a top-level paragraph or heading (or in a
//! blockquote of one line). It does not descend into lists or tables, nor into a blockquote
//! of several lines (the walk loses its place there), so code there is not code to it. The
//! tokeniser normalises line endings first and the offsets it reports are into that
//! normalised text, while they are compared with offsets into the file as written: in a
//! CRLF file the regions drift by one byte per line above them. A list goes on, to Qwen's
//! tokeniser, over lines `CommonMark` ends it at: a `>` line right after an item, and after a
//! blank line any indented line (so an indented code block right after a list is in the
//! list). All of this is reproduced here over pulldown-cmark's events (a `CommonMark` parser,
//! GFM tables on); where that parser and Qwen's tokeniser split blocks otherwise, so does
//! this.

use pulldown_cmark::{Event, Options, Parser, Tag};

/// The byte ranges of `content` Qwen treats as code (in the normalised text's offsets, as
/// Qwen compares them).
pub fn code_regions(content: &str) -> Vec<(usize, usize)> {
    if !content.contains('`')
        && !content.contains("    ")
        && !content.contains('\t')
        && !content.contains('~')
    {
        return Vec::new();
    }
    let text = content.replace("\r\n", "\n").replace('\r', "\n");
    let mut regions = Vec::new();
    // The open containers, outermost first, each with its range.
    let mut stack: Vec<(Tag<'_>, std::ops::Range<usize>)> = Vec::new();
    // Where the last top-level list ends for Qwen's tokeniser.
    let mut list_until = 0;
    for (event, range) in Parser::new_ext(&text, Options::ENABLE_TABLES).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(kind)) => {
                if stack.is_empty() && range.start >= list_until {
                    regions.push((range.start, range.end));
                }
                stack.push((Tag::CodeBlock(kind), range));
            }
            Event::Start(tag) => stack.push((tag, range)),
            Event::End(_) => {
                if let Some((Tag::List(_), range)) = stack.pop()
                    && stack.is_empty()
                {
                    list_until = list_end(&text, range.end);
                }
            }
            Event::Code(_) if walked(&stack, &text) => regions.push((range.start, range.end)),
            _ => {}
        }
    }
    regions
}

/// How far a list that `CommonMark` ends at `end` goes on for Qwen's tokeniser: over `>` and
/// other plain lines right after an item line, and over blank lines followed by an indented
/// line.
fn list_end(text: &str, end: usize) -> usize {
    let mut at = end;
    let mut until = end;
    let mut blank_before = text[..end].ends_with("\n\n");
    for line in text[end..].split_inclusive('\n') {
        let body = line.trim_end_matches('\n');
        let indent = body.len() - body.trim_start_matches([' ', '\t']).len();
        if body.trim().is_empty() {
            blank_before = true;
        } else if indent >= 2 || (!blank_before && !starts_block(body)) {
            until = at + line.len();
            blank_before = false;
        } else {
            break;
        }
        at += line.len();
    }
    until
}

/// A line that ends a list item for Qwen's tokeniser: a new item, a fence, a heading, a rule
/// or HTML.
fn starts_block(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with(['-', '*', '+', '#', '<'])
        || t.starts_with("```")
        || t.starts_with("~~~")
        || t.split_once(['.', ')'])
            .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether Qwen's walk reaches inline code inside these containers.
fn walked(stack: &[(Tag<'_>, std::ops::Range<usize>)], text: &str) -> bool {
    match stack.first() {
        Some((Tag::Paragraph | Tag::Heading { .. }, _)) => true,
        Some((Tag::BlockQuote(_), range)) => {
            !text[range.clone()].trim_end().contains('\n')
                && matches!(stack.get(1), Some((Tag::Paragraph | Tag::Heading { .. }, _)))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(text: &str) -> Vec<&str> {
        code_regions(text).into_iter().map(|(s, e)| &text[s..e]).collect()
    }

    #[test]
    fn top_level_code_only() {
        assert_eq!(code("a `x y` b\n"), ["`x y`"]);
        assert_eq!(code("p\n\n    indented\n"), ["indented\n"]);
        assert_eq!(code("- item `x`\n"), Vec::<&str>::new());
        assert_eq!(code("| a |\n|---|\n| `x` |\n"), Vec::<&str>::new());
        assert_eq!(code("> `x`\n"), ["`x`"]);
        assert_eq!(code("> a\n> `x`\n"), Vec::<&str>::new());
        assert_eq!(code("# h `x`\n"), ["`x`"]);
        assert_eq!(code("- a\n> q\n\n    @x\n"), Vec::<&str>::new());
        assert_eq!(code("- a\n\np\n\n    @x\n"), ["@x\n"]);
    }
}
