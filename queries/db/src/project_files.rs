//! The project files an agent reads, as each profile declares them in its
//! [`About::files`](crate::profile::About::files): globs over a path relative to the
//! repository, matched at any depth. `ctxgraph hook` asks whether an edited file is one of
//! them; `.pre-commit-hooks.yaml` limits its hooks to them with the one regular expression
//! [`regex()`] writes (pre-commit matches `files:` with Python's `re.search` on the path from
//! the repository root).
//!
//! The syntax is the small part of gitignore-style globs the profiles need, written out
//! here so that the same text is a Rust and a Python pattern (globset's regexes use Rust
//! syntax pre-commit cannot read): `*` is any run of characters within one name, `**/` any
//! folders (none included), `/**` at the end everything below, anything else literal.

/// One glob as a regular expression without anchors, in the syntax both Rust's `regex` and
/// Python's `re` read (`[^/]*`, `(?:…)`, escaped literals).
pub fn glob_regex(glob: &str) -> String {
    let mut out = String::new();
    let mut rest = glob;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("**/") {
            out.push_str("(?:[^/]+/)*");
            rest = after;
        } else if rest == "/**" {
            out.push_str("/.+");
            rest = "";
        } else if let Some(after) = rest.strip_prefix('*') {
            out.push_str("[^/]*");
            rest = after;
        } else {
            let c = rest.chars().next().unwrap_or_default();
            if c.is_ascii_alphanumeric() || matches!(c, '/' | '_' | '-') {
                out.push(c);
            } else {
                out.push('\\');
                out.push(c);
            }
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// Every glob of `globs` in one expression matching a whole path relative to the
/// repository, at any depth: `(?:^|/)(?:a|b|…)$`. Each glob once, in order.
pub fn regex<'a>(globs: impl IntoIterator<Item = &'a str>) -> String {
    let mut seen = Vec::new();
    for glob in globs {
        let one = glob_regex(glob);
        if !seen.contains(&one) {
            seen.push(one);
        }
    }
    format!("(?:^|/)(?:{})$", seen.join("|"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(glob: &str, path: &str) -> bool {
        regex::Regex::new(&regex([glob])).unwrap().is_match(path)
    }

    #[test]
    fn names_match_at_any_depth_and_only_whole() {
        assert!(matches("AGENTS.md", "AGENTS.md"));
        assert!(matches("AGENTS.md", "pkg/sub/AGENTS.md"));
        assert!(!matches("AGENTS.md", "NOTAGENTS.md"));
        assert!(!matches("AGENTS.md", "AGENTS.mdx"));
        assert!(!matches("AGENTS.md", "AGENTSxmd"));
    }

    #[test]
    fn stars_stay_in_one_name_and_double_stars_cross_folders() {
        assert!(matches(".claude/rules/**/*.md", ".claude/rules/a.md"));
        assert!(matches(".claude/rules/**/*.md", "x/.claude/rules/deep/er/a.md"));
        assert!(!matches(".claude/rules/**/*.md", ".claude/rules/a.txt"));
        assert!(matches(".clinerules/**", ".clinerules/a/b.md"));
        assert!(!matches(".clinerules/**", ".clinerules"));
        assert!(matches(".kilocoderules*", ".kilocoderules-code"));
        assert!(!matches(".kilocoderules*", ".kilocoderules/x"));
    }

    #[test]
    fn each_glob_once() {
        assert_eq!(regex(["A.md", "B.md", "A.md"]), r"(?:^|/)(?:A\.md|B\.md)$");
    }
}
