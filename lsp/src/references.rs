//! What in an open document names other files: the `instructions` entries of an opencode
//! config and the `@imports` of a Markdown rule file, each with its byte range.

use std::ops::Range;
use std::path::{Path, PathBuf};

use jsonc_parser::ast::Value;

/// One place in a document that names files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reference {
    /// An `instructions` entry, as written (without its quotes).
    Instruction {
        /// The string literal, quotes included.
        range: Range<usize>,
        /// The entry.
        entry: String,
    },
    /// An `@path` import.
    Import {
        /// `@` and the path.
        range: Range<usize>,
        /// The path as written after `@`.
        path: String,
    },
}

impl Reference {
    /// Its byte range in the document.
    pub fn range(&self) -> Range<usize> {
        match self {
            Reference::Instruction { range, .. } | Reference::Import { range, .. } => range.clone(),
        }
    }
}

/// The references in a document at `path`: `instructions` entries in an opencode config
/// (`opencode.json`, `opencode.jsonc`, `config.json`), `@imports` in Markdown.
pub fn references(path: &Path, text: &str) -> Vec<Reference> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let extension = path.extension().and_then(|e| e.to_str()).unwrap_or_default();
    if matches!(extension, "json" | "jsonc") {
        instructions(text)
    } else if extension.eq_ignore_ascii_case("md") || name.eq_ignore_ascii_case("AGENTS.md") {
        imports(text)
    } else {
        Vec::new()
    }
}

/// The reference whose range holds byte `offset`.
pub fn reference_at(path: &Path, text: &str, offset: usize) -> Option<Reference> {
    references(path, text).into_iter().find(|r| r.range().contains(&offset) || r.range().end == offset)
}

/// The string elements of the top-level `instructions` array; nothing when the text does
/// not parse (the config error says why).
fn instructions(text: &str) -> Vec<Reference> {
    let options = jsonc_parser::ParseOptions::default();
    let Ok(parsed) = jsonc_parser::parse_to_ast(text, &jsonc_parser::CollectOptions::default(), &options)
    else {
        return Vec::new();
    };
    let Some(Value::Object(root)) = parsed.value else { return Vec::new() };
    let Some(property) = root.properties.iter().find(|p| p.name.as_str() == "instructions") else {
        return Vec::new();
    };
    let Value::Array(entries) = &property.value else { return Vec::new() };
    entries
        .elements
        .iter()
        .filter_map(|element| match element {
            Value::StringLit(literal) => Some(Reference::Instruction {
                range: literal.range.start..literal.range.end,
                entry: literal.value.to_string(),
            }),
            _ => None,
        })
        .collect()
}

/// `@path` tokens at a word's start, outside code fences and backtick spans, that look like
/// a path (a `.` or `/` in them: `@someone` is a mention, not an import).
fn imports(text: &str) -> Vec<Reference> {
    let mut found = Vec::new();
    let mut in_fence = false;
    let mut line_start = 0;
    for line in text.split_inclusive('\n') {
        let offset = line_start;
        line_start += line.len();
        if line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let mut in_code = false;
        let mut previous = ' ';
        for (at, ch) in line.char_indices() {
            if ch == '`' {
                in_code = !in_code;
            } else if ch == '@' && !in_code && previous.is_whitespace() {
                let rest = &line[at + 1..];
                let length = rest.find(|c: char| c.is_whitespace() || c == '`').unwrap_or(rest.len());
                let path = rest[..length].trim_end_matches([',', ';', ')', ']', ':']);
                if !path.is_empty() && (path.contains('.') || path.contains('/')) {
                    let start = offset + at;
                    found.push(Reference::Import {
                        range: start..start + 1 + path.len(),
                        path: path.to_owned(),
                    });
                }
            }
            previous = ch;
        }
    }
    found
}

/// An `@path` resolved as Gemini CLI and Claude Code resolve it: `~/` from the home
/// directory, an absolute path as is, anything else from the importing file's directory.
pub fn resolve_import(importer: &Path, written: &str, home: &Path) -> PathBuf {
    let joined = if let Some(below_home) = written.strip_prefix("~/") {
        home.join(below_home)
    } else {
        importer.parent().unwrap_or(Path::new("/")).join(written)
    };
    // Lexically normalised, as the agents' answers name their files.
    ctxgraph_engine::answers::normalize(&joined)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_entries_are_found_with_their_quotes() {
        let text = "{\n  // shared\n  \"instructions\": [\"docs/*.md\", 3, \"x.md\"],\n  \"model\": \"a\"\n}";
        let found = references(Path::new("/r/opencode.jsonc"), text);
        let entries: Vec<(&str, String)> = found
            .iter()
            .map(|r| match r {
                Reference::Instruction { range, entry } => (&text[range.clone()], entry.clone()),
                Reference::Import { .. } => ("", String::new()),
            })
            .collect();
        assert_eq!(entries, [("\"docs/*.md\"", "docs/*.md".to_owned()), ("\"x.md\"", "x.md".to_owned())]);
        assert!(references(Path::new("/r/opencode.json"), "{ broken").is_empty());
    }

    #[test]
    fn imports_skip_code_mentions_and_emails() {
        let text = "See @RUNBOOK.md and @docs/a.md, not @someone or me@x.io\n`@in/code.md`\n```\n@fenced.md\n```\n@~/g.md";
        let paths: Vec<String> = references(Path::new("/r/AGENTS.md"), text)
            .into_iter()
            .map(|r| match r {
                Reference::Import { range, path } => {
                    assert!(text[range.clone()].starts_with('@'));
                    path
                }
                Reference::Instruction { entry, .. } => entry,
            })
            .collect();
        assert_eq!(paths, ["RUNBOOK.md", "docs/a.md", "~/g.md"]);
        let home = Path::new("/home/u");
        assert_eq!(resolve_import(Path::new("/r/a/AGENTS.md"), "b.md", home), Path::new("/r/a/b.md"));
        assert_eq!(resolve_import(Path::new("/r/AGENTS.md"), "~/g.md", home), Path::new("/home/u/g.md"));
        assert_eq!(resolve_import(Path::new("/r/a/AGENTS.md"), "./x/../c.md", home), Path::new("/r/a/c.md"));
    }
}

/// The byte range of the key at `path` (`["compaction", "tail_turns"]`) in a JSONC text:
/// where a schema issue about that value is underlined. The deepest key found when the
/// rest of the path is not there (an index into an array, a value the text lacks).
pub fn key_range(text: &str, path: &[String]) -> Option<Range<usize>> {
    let options = jsonc_parser::ParseOptions::default();
    let parsed = jsonc_parser::parse_to_ast(text, &jsonc_parser::CollectOptions::default(), &options).ok()?;
    let mut value = parsed.value?;
    let mut found = None;
    for key in path {
        let Value::Object(object) = value else { break };
        let Some(property) = object.properties.into_iter().find(|p| p.name.as_str() == key) else { break };
        found = Some(match &property.name {
            jsonc_parser::ast::ObjectPropName::String(name) => name.range.start..name.range.end,
            jsonc_parser::ast::ObjectPropName::Word(name) => name.range.start..name.range.end,
        });
        value = property.value;
    }
    found
}

/// The key under byte `offset` of a JSONC text, with its path from the root
/// (`["context", "fileName"]`) and its byte range: what a settings hover explains. `None`
/// off a key, or when the text does not parse.
pub fn key_at(text: &str, offset: usize) -> Option<(Vec<String>, Range<usize>)> {
    use jsonc_parser::common::Ranged as _;
    let options = jsonc_parser::ParseOptions::default();
    let parsed = jsonc_parser::parse_to_ast(text, &jsonc_parser::CollectOptions::default(), &options).ok()?;
    let mut value = parsed.value?;
    let mut path = Vec::new();
    loop {
        let Value::Object(object) = value else { return None };
        let property = object.properties.into_iter().find(|p| {
            let range = p.range();
            range.start <= offset && offset <= range.end
        })?;
        let name = match &property.name {
            jsonc_parser::ast::ObjectPropName::String(name) => name.range.start..name.range.end,
            jsonc_parser::ast::ObjectPropName::Word(name) => name.range.start..name.range.end,
        };
        path.push(property.name.as_str().to_owned());
        if name.contains(&offset) || name.end == offset {
            return Some((path, name));
        }
        value = property.value;
    }
}

#[cfg(test)]
mod key_tests {
    use super::*;

    #[test]
    fn a_key_path_points_at_its_deepest_key() {
        let text = "{ \"compaction\": { \"tail_turns\": \"x\" } }";
        let path = |keys: &[&str]| keys.iter().map(|k| (*k).to_owned()).collect::<Vec<_>>();
        let range = key_range(text, &path(&["compaction", "tail_turns"]));
        assert_eq!(range.map(|r| &text[r]), Some("\"tail_turns\""));
        let range = key_range(text, &path(&["compaction", "nope"]));
        assert_eq!(range.map(|r| &text[r]), Some("\"compaction\""));
        assert_eq!(key_range(text, &[]), None);
    }

    #[test]
    fn the_key_under_the_cursor_has_its_path() {
        let text = "{ \"context\": { \"fileName\": [\"A.md\"] }, \"x\": 1 }";
        let at = |needle: &str| text.find(needle).expect("in the text") + 2;
        let (path, range) = key_at(text, at("\"fileName\"")).expect("a key");
        assert_eq!((path, &text[range]), (vec!["context".to_owned(), "fileName".to_owned()], "\"fileName\""));
        assert_eq!(key_at(text, at("\"x\"")).map(|(p, _)| p), Some(vec!["x".to_owned()]));
        assert_eq!(key_at(text, at("A.md")), None, "a value, not a key");
        assert_eq!(key_at("{ not json", 3), None);
    }
}
