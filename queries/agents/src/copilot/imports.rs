//! CP9/CP10: `@path` imports in `AGENTS.md`, `CLAUDE.md` and the user's
//! `copilot-instructions.md`: which `@` starts one, where its path ends, and the
//! `<imported_custom_instruction>` block Copilot puts right after it.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use ctxgraph_db::db::Db;
use ctxgraph_db::files::{file_text, real_path};
use ctxgraph_db::path;
use ctxgraph_db::system::FileKind;

/// CP10: files nested deeper than this are inlined, but their own `@paths` are left as
/// written.
pub const MAX_DEPTH: usize = 8;

/// What became of one `@path`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum Outcome {
    /// Its text follows the token.
    Inlined,
    /// CP10: imported before from the same root file: a self-closing block marks it.
    AlreadyLoaded,
    /// No such file: the token stays, nothing follows.
    Missing,
    /// A directory (or something else that is not a file).
    NotAFile,
    /// CP10: it resolves outside the boundary (the git root, or `~/.copilot` for the user's
    /// file).
    Outside,
    /// CP10: the importing file is already [`MAX_DEPTH`] imports deep.
    TooDeep,
}

/// One `@path` met while expanding a file.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Import {
    /// The file whose text holds the token.
    pub from: PathBuf,
    /// The path as written after `@`.
    pub token: String,
    /// Where it points (resolved from the importing file's directory).
    pub target: PathBuf,
    /// What Copilot does with it.
    #[serde(flatten)]
    pub outcome: Outcome,
}

impl Import {
    /// The rule [`Import::reason`] cites.
    pub fn rule(&self) -> &'static str {
        match self.outcome {
            Outcome::Inlined => "CP9",
            _ => "CP10",
        }
    }

    /// Why, in words, with the rule behind it.
    pub fn reason(&self) -> &'static str {
        match self.outcome {
            Outcome::Inlined => "inlined after the token (CP9)",
            Outcome::AlreadyLoaded => "imported before from the same file: marked skipped (CP10)",
            Outcome::Missing => "no such file: the token stays as written (CP10)",
            Outcome::NotAFile => "not a file: the token stays as written (CP10)",
            Outcome::Outside => "outside the importing file's boundary: the token stays as written (CP10)",
            Outcome::TooDeep => "the importing file is 8 imports deep: its tokens are not followed (CP10)",
        }
    }
}

/// A file's text with its imports expanded, and every token met.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Expanded {
    /// The text Copilot sends.
    pub text: String,
    /// Every `@path` in it and in the files it inlines, in order.
    pub imports: Vec<Import>,
}

/// CP9: expands the imports of `text` (the file at `path`), resolving each against the
/// file's directory; a target must resolve inside `boundary`.
pub fn expand(db: &dyn Db, path: &Path, text: &str, boundary: &Path) -> Expanded {
    let mut seen = HashSet::new();
    seen.insert(real_path(db, path));
    let boundary = real_path(db, boundary);
    let mut out = Expanded::default();
    out.text = expand_at(db, path, text, &boundary, 0, &mut seen, &mut out.imports);
    out
}

fn expand_at(
    db: &dyn Db,
    path: &Path,
    text: &str,
    boundary: &Path,
    depth: usize,
    seen: &mut HashSet<PathBuf>,
    imports: &mut Vec<Import>,
) -> String {
    let dir = path.parent().unwrap_or(Path::new("/"));
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for (start, end) in tokens(text) {
        let token = &text[start..end];
        let target = path::resolve(dir, token);
        let mut import =
            Import { from: path.to_path_buf(), token: token.to_owned(), target, outcome: Outcome::Inlined };
        if depth >= MAX_DEPTH {
            import.outcome = Outcome::TooDeep;
            imports.push(import);
            continue;
        }
        out.push_str(&text[copied..end]);
        copied = end;
        match db.files().get(db, &import.target).kind(db) {
            FileKind::Missing | FileKind::Inaccessible => import.outcome = Outcome::Missing,
            FileKind::Directory | FileKind::Other => import.outcome = Outcome::NotAFile,
            FileKind::File => {
                let real = real_path(db, &import.target);
                let source = path::display(&import.target);
                if !real.starts_with(boundary) {
                    import.outcome = Outcome::Outside;
                } else if !seen.insert(real) {
                    import.outcome = Outcome::AlreadyLoaded;
                    let _ = write!(
                        out,
                        "\n\n<imported_custom_instruction source=\"{source}\" skipped=\"already-loaded\" />"
                    );
                } else {
                    let file = db.files().get(db, &import.target);
                    let inner = file_text(db, file).as_ref().map(|d| d.text.to_string()).unwrap_or_default();
                    let target = import.target.clone();
                    imports.push(import);
                    let expanded = expand_at(db, &target, &inner, boundary, depth + 1, seen, imports);
                    let _ = write!(
                        out,
                        "\n\n<imported_custom_instruction source=\"{source}\">\n{}\n</imported_custom_instruction>",
                        expanded.trim_end()
                    );
                    continue;
                }
            }
        }
        imports.push(import);
    }
    out.push_str(&text[copied..]);
    out
}

/// CP9: the byte ranges of the paths of every `@path` token in `text`, outside code. An
/// `@` starts a token at the start of a line or after any character that cannot end an
/// e-mail name (not a letter, digit, `.`, `_`, `+` or `-`); the path runs to whitespace,
/// a quote, `<`, `>` or a backtick, less trailing `)]},.;:!?`. Fenced blocks (```` ``` ````
/// or `~~~`) and inline code spans (a backtick run to the next run of the same length, or
/// to the end of the line) hold no tokens.
pub fn tokens(text: &str) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let body = line.trim_end_matches(['\n', '\r']);
        let indent = body.len() - body.trim_start_matches(' ').len();
        let trimmed = &body[indent..];
        let run = |c: char| trimmed.chars().take_while(|&x| x == c).count();
        if let Some((c, n)) = fence {
            if indent <= 3 && run(c) >= n && trimmed.trim_start_matches(c).trim().is_empty() {
                fence = None;
            }
            continue;
        }
        if indent <= 3 {
            let opened = ['`', '~'].into_iter().map(|c| (c, run(c))).find(|&(_, n)| n >= 3);
            if let Some((c, n)) = opened
                && (c == '~' || !trimmed[n..].contains('`'))
            {
                fence = Some((c, n));
                continue;
            }
        }
        scan_line(body, start, &mut found);
    }
    found
}

fn scan_line(line: &str, base: usize, found: &mut Vec<(usize, usize)>) {
    let bytes = line.as_bytes();
    let mut at = 0;
    let mut prev: Option<char> = None;
    while at < line.len() {
        let ch = line[at..].chars().next().unwrap_or(' ');
        if ch == '`' {
            let run = line[at..].chars().take_while(|&x| x == '`').count();
            // The next run of exactly as many backticks closes the span; none: the line's rest.
            let mut next = at + run;
            let mut close = None;
            while next < line.len() {
                if bytes[next] == b'`' {
                    let other = line[next..].chars().take_while(|&x| x == '`').count();
                    if other == run {
                        close = Some(next + other);
                        break;
                    }
                    next += other;
                } else {
                    next += 1;
                }
            }
            let Some(after) = close else { return };
            at = after;
            prev = Some('`');
            continue;
        }
        if ch == '@' && !prev.is_some_and(|p| p.is_alphanumeric() || matches!(p, '.' | '_' | '+' | '-')) {
            let rest = &line[at + 1..];
            let len = rest
                .find(|x: char| x.is_whitespace() || matches!(x, '"' | '\'' | '<' | '>' | '`'))
                .unwrap_or(rest.len());
            let path = rest[..len].trim_end_matches([')', ']', '}', ',', '.', ';', ':', '!', '?']);
            if !path.is_empty() {
                found.push((base + at + 1, base + at + 1 + path.len()));
            }
            at += 1 + len;
            prev = rest[..len].chars().last().or(Some('@'));
            continue;
        }
        prev = Some(ch);
        at += ch.len_utf8();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(text: &str) -> Vec<&str> {
        tokens(text).into_iter().map(|(a, b)| &text[a..b]).collect()
    }

    #[test]
    fn which_at_signs_start_a_token() {
        assert_eq!(
            paths("@a.md (@b.md), @c.md. \"@d.md\" x@e.md +@f.md :@g.md"),
            ["a.md", "b.md", "c.md", "d.md", "g.md"]
        );
        assert_eq!(paths("a `x` @a.md then `@b.md` and ` @c.md"), ["a.md"]);
        assert_eq!(
            paths("```\n@a.md\n```\n    @b.md\n~~~\n@c.md\n~~~\n@d.md)x @e.md*"),
            ["b.md", "d.md)x", "e.md*"]
        );
        assert_eq!(paths("@a.md.. @b.md), @c.md\"x"), ["a.md", "b.md", "c.md"]);
    }
}
