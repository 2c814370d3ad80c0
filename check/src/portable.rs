//! Machine-independent text: the repository and home paths written as `<repo>` and
//! `<home>`.
//!
//! The replacement is textual, so it also covers paths inside rule content and error
//! messages, but it only replaces a whole path: the match must not continue a longer
//! name (`/repo` is not replaced in `/repo-old` or `/x/repo`). Nested roots (a home inside
//! the repository) are tried longest first.

use std::path::Path;

use ctxgraph_db::path;

/// Rewrites a machine's repository and home paths as `<repo>` and `<home>`, and nothing else.
#[derive(Clone, Debug)]
pub struct Placeholders {
    /// `(real path, placeholder)`, longest real path first.
    pairs: Vec<(String, &'static str)>,
}

impl Placeholders {
    /// Placeholders for this repository and home directory.
    pub fn new(repo: &Path, home: &Path) -> Self {
        let mut pairs: Vec<(String, &'static str)> =
            vec![(path::display(repo), "<repo>"), (path::display(home), "<home>")];
        // `/` as a root would rewrite every path; it is never one worth naming.
        pairs.retain(|(real, _)| real.len() > 1);
        pairs.sort_by_key(|(real, _)| std::cmp::Reverse(real.len()));
        Self { pairs }
    }

    /// `text` with every whole occurrence of a known root replaced by its placeholder.
    pub fn apply(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        let mut previous: Option<char> = None;
        'scan: while let Some(c) = rest.chars().next() {
            if !previous.is_some_and(is_path_char) {
                for (real, placeholder) in &self.pairs {
                    if let Some(after) = rest.strip_prefix(real.as_str())
                        && !continues_name(after)
                    {
                        out.push_str(placeholder);
                        previous = real.chars().next_back();
                        rest = after;
                        continue 'scan;
                    }
                }
            }
            out.push(c);
            previous = Some(c);
            rest = &rest[c.len_utf8()..];
        }
        out
    }

    /// `path` as a placeholder-rooted string, in `/` form.
    pub fn path(&self, path: &Path) -> String {
        self.apply(&path::display(path))
    }
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-')
}

fn is_path_char(c: char) -> bool {
    is_name_char(c) || matches!(c, '.' | '/' | '~')
}

/// Whether `after` continues the file name the match ended in (`.bak` does, `. ` does not).
fn continues_name(after: &str) -> bool {
    let mut chars = after.chars();
    match chars.next() {
        Some('.') => chars.next().is_some_and(is_name_char),
        Some(c) => is_name_char(c),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_paths_only() {
        let p = Placeholders::new(Path::new("/w/repo"), Path::new("/w/repo/ci/home"));
        let cases = [
            ("Instructions from: /w/repo/AGENTS.md", "Instructions from: <repo>/AGENTS.md"),
            ("Working directory: /w/repo\nnext", "Working directory: <repo>\nnext"),
            ("root: /w/repo.", "root: <repo>."),
            ("/w/repo/ci/home/.claude/CLAUDE.md", "<home>/.claude/CLAUDE.md"),
            ("/w/repo-old/x and /w/repo.bak and /x/w/repo", "/w/repo-old/x and /w/repo.bak and /x/w/repo"),
            ("\"/w/repo\"", "\"<repo>\""),
            ("é/w/repo", "é/w/repo"),
        ];
        for (input, expected) in cases {
            assert_eq!(p.apply(input), expected, "{input:?}");
        }
    }

    #[test]
    fn the_file_system_root_is_never_a_placeholder() {
        let p = Placeholders::new(Path::new("/"), Path::new("/h"));
        assert_eq!(p.apply("/a /h/b"), "/a <home>/b");
    }
}
