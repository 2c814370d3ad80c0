//! What Claude Code reads out of one rule file's text: the YAML frontmatter and its `paths:`
//! (CC6), HTML comments it cuts from the text (CC7), and the `@imports` it follows (CC4).
//!
//! The Markdown is tokenised with pulldown-cmark, the frontmatter parsed with saphyr;
//! what is hand-written here is only Claude Code's own use of them (which tokens it scans,
//! its import pattern, its `paths:` splitting), which no crate does.

use std::sync::LazyLock;

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use regex::Regex;
use saphyr::{LoadableYamlNode, Scalar, Yaml};

/// One rule file's text as Claude Code keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Parsed {
    /// The text after the frontmatter, HTML comment blocks cut (CC6, CC7); untrimmed.
    pub content: String,
    /// CC6: the `paths:` globs, `None` when the file applies everywhere.
    pub globs: Option<Vec<String>>,
    /// CC4: the `@` paths, in the order they first appear, as written (`~/`, relative or
    /// absolute; fragments and `\ ` escapes resolved).
    pub imports: Vec<String>,
}

/// Parses a rule file's decoded text.
pub fn parse(text: &str) -> Parsed {
    let (frontmatter, body) = split_frontmatter(text);
    let globs = frontmatter.and_then(paths_globs);
    let content = strip_comment_blocks(body);
    let imports = if body.contains('@') { imports(&content) } else { Vec::new() };
    Parsed { content, globs, imports }
}

/// CC17-CC19: a skill's, command's, agent's or output style's frontmatter, each key with its
/// value as text (a list's items joined by `, `, as Claude Code joins an agent's `tools:`),
/// and the text after it.
pub fn fields(text: &str) -> (Vec<(String, String)>, &str) {
    let (frontmatter, body) = split_frontmatter(text);
    let Some(frontmatter) = frontmatter else { return (Vec::new(), body) };
    let requoted;
    let docs = if let Ok(docs) = Yaml::load_from_str(frontmatter) {
        docs
    } else {
        requoted = requote(frontmatter);
        Yaml::load_from_str(&requoted).unwrap_or_default()
    };
    let Some(Yaml::Mapping(map)) = docs.first() else { return (Vec::new(), body) };
    let text_of = |value: &Yaml<'_>| -> Option<String> {
        match value {
            Yaml::Sequence(items) => {
                Some(items.iter().filter_map(|i| scalar_text(i)).collect::<Vec<_>>().join(", "))
            }
            other => scalar_text(other),
        }
    };
    let fields =
        map.iter().filter_map(|(key, value)| Some((as_str(key)?.to_owned(), text_of(value)?))).collect();
    (fields, body)
}

fn scalar_text(value: &Yaml<'_>) -> Option<String> {
    match value {
        Yaml::Value(Scalar::String(s)) | Yaml::Representation(s, _, _) => Some(s.to_string()),
        Yaml::Value(Scalar::Boolean(b)) => Some(b.to_string()),
        Yaml::Value(Scalar::Integer(n)) => Some(n.to_string()),
        Yaml::Value(Scalar::FloatingPoint(f)) => Some(f.into_inner().to_string()),
        _ => None,
    }
}

/// CC6: a leading `---` line, then everything up to the next `---` (anywhere, even inside
/// a line: Claude Code's pattern is that lax) and the rest of that line's whitespace.
fn split_frontmatter(text: &str) -> (Option<&str>, &str) {
    static FRONTMATTER: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\A---\s*\n((?s:.*?))---\s*\n?").expect("valid pattern"));
    if text.get(3..).is_none_or(|rest| !rest.contains("---")) {
        return (None, text);
    }
    match FRONTMATTER.captures(text) {
        Some(caps) => {
            let whole = caps.get(0).expect("match");
            (Some(caps.get(1).map_or("", |m| m.as_str())), &text[whole.end()..])
        }
        None => (None, text),
    }
}

/// CC6: the `paths:` key of the frontmatter as globs. A string is split at top-level
/// commas and its braces expanded; a list contributes each of its strings; a trailing
/// `/**` is dropped; a list of nothing but `**` (or of nothing) means "everywhere".
fn paths_globs(frontmatter: &str) -> Option<Vec<String>> {
    let requoted;
    let docs = if let Ok(docs) = Yaml::load_from_str(frontmatter) {
        docs
    } else {
        requoted = requote(frontmatter);
        Yaml::load_from_str(&requoted).ok()?
    };
    let Some(Yaml::Mapping(map)) = docs.first() else { return None };
    let paths = map.iter().find_map(|(key, value)| (as_str(key) == Some("paths")).then_some(value))?;
    if is_falsy(paths) {
        return None;
    }
    let mut globs = Vec::new();
    collect_globs(paths, &mut globs);
    let globs: Vec<String> = globs
        .into_iter()
        .map(|g| g.strip_suffix("/**").map(str::to_owned).unwrap_or(g))
        .filter(|g| !g.is_empty())
        .collect();
    if globs.iter().all(|g| g == "**") { None } else { Some(globs) }
}

/// For a frontmatter that does not parse, Claude Code's second try: plain `key: value`
/// values that hold YAML indicators quoted, and leading tabs as spaces (an approximation
/// of its quoting: see docs/profiles/claude-code.md, CC6).
fn requote(frontmatter: &str) -> String {
    static KEY_VALUE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^([a-zA-Z_-]+):\s+(\S.*)$").expect("valid pattern"));
    let quoted: Vec<String> = frontmatter
        .split('\n')
        .map(|line| {
            let Some(caps) = KEY_VALUE.captures(line) else { return line.to_owned() };
            let (key, value) = (&caps[1], &caps[2]);
            let is_quoted = (value.starts_with('"') && value.ends_with('"'))
                || (value.starts_with('\'') && value.ends_with('\''));
            if is_quoted || !value.contains(['{', '}', '[', ']', '*', '&', '!', '|', '>', '%', '@', '`', '#'])
            {
                return line.to_owned();
            }
            format!("{key}: \"{}\"", value.replace('\\', "\\\\").replace('"', "\\\""))
        })
        .map(|line| {
            let tabs = line.len() - line.trim_start_matches('\t').len();
            format!("{}{}", "  ".repeat(tabs), &line[tabs..])
        })
        .collect();
    quoted.join("\n")
}

fn as_str<'a>(value: &'a Yaml<'_>) -> Option<&'a str> {
    match value {
        Yaml::Value(Scalar::String(s)) | Yaml::Representation(s, _, _) => Some(s),
        _ => None,
    }
}

/// JavaScript's falsiness, for `paths:` values.
fn is_falsy(value: &Yaml<'_>) -> bool {
    match value {
        Yaml::Value(Scalar::Null) | Yaml::BadValue => true,
        Yaml::Value(Scalar::Boolean(b)) => !b,
        Yaml::Value(Scalar::Integer(n)) => *n == 0,
        Yaml::Value(Scalar::FloatingPoint(f)) => f.into_inner() == 0.0 || f.is_nan(),
        Yaml::Value(Scalar::String(s)) | Yaml::Representation(s, _, _) => s.is_empty(),
        _ => false,
    }
}

fn collect_globs(value: &Yaml<'_>, out: &mut Vec<String>) {
    match value {
        Yaml::Sequence(items) => items.iter().for_each(|item| collect_globs(item, out)),
        other => {
            if let Some(text) = as_str(other) {
                for part in split_top_level_commas(text) {
                    out.extend(expand_first_braces(&part));
                }
            }
        }
    }
}

fn split_top_level_commas(text: &str) -> Vec<String> {
    let (mut parts, mut current, mut depth) = (Vec::new(), String::new(), 0i32);
    for c in text.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    parts.push(current);
    parts.into_iter().map(|p| p.trim().to_owned()).filter(|p| !p.is_empty()).collect()
}

/// The most patterns one `paths:` entry expands to; past it the entry stays unexpanded.
const MAX_EXPANSIONS: usize = 1000;

/// `a{b,c}d{e,f}` → four patterns: the leftmost group without a nested `}` first,
/// repeatedly, as Claude Code expands `paths:` (not minimatch's nesting-aware expansion).
fn expand_first_braces(pattern: &str) -> Vec<String> {
    static GROUP: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\A([^{]*)\{([^}]+)\}((?s:.*))\z").expect("valid pattern"));
    if !pattern.contains('{') {
        return vec![pattern.to_owned()];
    }
    let (mut done, mut todo) = (Vec::new(), vec![pattern.to_owned()]);
    while let Some(next) = todo.pop() {
        let Some(caps) = GROUP.captures(&next) else {
            done.push(next);
            continue;
        };
        let alternatives: Vec<&str> = caps[2].split(',').map(str::trim).collect();
        if done.len() + todo.len() + alternatives.len() > MAX_EXPANSIONS {
            return vec![pattern.to_owned()];
        }
        for alt in alternatives.iter().rev() {
            todo.push(format!("{}{alt}{}", &caps[1], &caps[3]));
        }
    }
    done
}

/// CC7: top-level HTML blocks that hold comments lose the comments (and the blank lines
/// after them); a block left with nothing but whitespace goes entirely. Line endings are
/// normalised to LF when anything was cut.
fn strip_comment_blocks(body: &str) -> String {
    if !body.contains("<!--") {
        return body.to_owned();
    }
    let text = body.replace("\r\n", "\n").replace('\r', "\n");
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut depth = 0usize;
    for (event, range) in Parser::new_ext(&text, Options::empty()).into_offset_iter() {
        match event {
            Event::Start(Tag::HtmlBlock) if depth == 0 => {
                let raw = &text[range.clone()];
                let trimmed = raw.trim_start();
                if trimmed.starts_with("<!--") && trimmed.contains("-->") {
                    let end = range.end + text[range.end..].bytes().take_while(|&b| b == b'\n').count();
                    let kept = strip_comments(&text[range.start..end]);
                    out.push_str(&text[copied..range.start]);
                    if !kept.trim().is_empty() {
                        out.push_str(&kept);
                    }
                    copied = end;
                }
                depth += 1;
            }
            Event::Start(_) => depth += 1,
            Event::End(_) => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    if copied == 0 {
        return body.to_owned();
    }
    out.push_str(&text[copied..]);
    out
}

fn strip_comments(html: &str) -> String {
    static COMMENT: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?s)<!--.*?-->").expect("valid pattern"));
    COMMENT.replace_all(html, "").into_owned()
}

/// CC4: the `@path` mentions in the file's prose: text and HTML (comments cut), never
/// code blocks or code spans.
fn imports(content: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut text = String::new();
    let mut in_code = 0usize;
    let flush = |text: &mut String, found: &mut Vec<String>| {
        scan_mentions(text, found);
        text.clear();
    };
    for event in Parser::new_ext(content, Options::empty()) {
        match event {
            Event::Start(Tag::CodeBlock(_)) => {
                flush(&mut text, &mut found);
                in_code += 1;
            }
            Event::End(TagEnd::CodeBlock) => in_code = in_code.saturating_sub(1),
            Event::Text(t) if in_code == 0 => text.push_str(&t),
            Event::SoftBreak | Event::HardBreak if in_code == 0 => text.push('\n'),
            Event::Html(html) | Event::InlineHtml(html) if in_code == 0 => {
                flush(&mut text, &mut found);
                let kept = strip_comments(&html);
                if !kept.trim().is_empty() {
                    scan_mentions(&kept, &mut found);
                }
            }
            _ => flush(&mut text, &mut found),
        }
    }
    flush(&mut text, &mut found);
    found
}

/// Claude Code's mention pattern: `@` at the start or after whitespace, up to the next
/// unescaped whitespace; `#fragment` dropped; `\ ` is a space. Kept: `./`, `~/`,
/// absolute paths other than `/`, and names starting with a letter, digit, `.`, `_`, `-`.
fn scan_mentions(text: &str, found: &mut Vec<String>) {
    static MENTION: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?:^|\s)@((?:[^\s\\]|\\ )+)").expect("valid pattern"));
    for caps in MENTION.captures_iter(text) {
        let mut path = &caps[1];
        if let Some(hash) = path.find('#') {
            path = &path[..hash];
        }
        let path = path.replace("\\ ", " ");
        if path.is_empty() {
            continue;
        }
        let first = path.chars().next().expect("not empty");
        let keep = path.starts_with("./")
            || path.starts_with("~/")
            || (path.starts_with('/') && path != "/")
            || (!path.starts_with('@')
                && !path.starts_with(['#', '%', '^', '&', '*', '(', ')'])
                && (first.is_ascii_alphanumeric() || matches!(first, '.' | '_' | '-')));
        if keep && !found.contains(&path) {
            found.push(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_skip_code_emails_and_comments() {
        let text =
            "a @x.md\nme@y.md `@z.md`\n```\n@w.md\n```\n<!-- @c.md -->\n@./d.md#s @~/h.md @/abs.md @/ @@n\n";
        assert_eq!(parse(text).imports, ["x.md", "./d.md", "~/h.md", "/abs.md"]);
    }

    #[test]
    fn frontmatter_paths_forms() {
        let globs = |t: &str| parse(t).globs;
        assert_eq!(
            globs("---\npaths: \"src/*.{ts,tsx}, lib/**\"\n---\nx"),
            Some(vec!["src/*.ts".into(), "src/*.tsx".into(), "lib".into()])
        );
        assert_eq!(globs("---\npaths:\n  - a/**\n  - b\n---\nx"), Some(vec!["a".into(), "b".into()]));
        assert_eq!(globs("---\npaths: \"**\"\n---\nx"), None);
        assert_eq!(globs("---\npaths: []\n---\nx"), None);
        assert_eq!(globs("---\ndescription: d\n---\nx"), None);
        assert_eq!(globs("---\npaths: 0\n---\nx"), None);
        // Invalid YAML: the retry quotes the value, so the rule is held back (as Claude Code
        // held back such a rule in an exploratory capture).
        assert_eq!(globs("---\npaths: [\n---\nx"), Some(vec!["[".into()]));
        assert_eq!(parse("---\ntitle: t\n---\nbody\n").content, "body\n");
    }

    #[test]
    fn comment_blocks_go_with_their_blank_lines() {
        assert_eq!(parse("a\n\n<!-- c -->\n\nb\n").content, "a\n\nb\n");
        assert_eq!(parse("a\n<!-- c --> kept\nb\n").content, "a\n kept\nb\n");
    }
}
