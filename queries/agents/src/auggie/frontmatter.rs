//! AU4: what Auggie reads from a rule file's or a skill's front matter. Auggie matches
//! `^---\s*\n([\s\S]*?)\n---\s*\n` (JavaScript's `\s`, which also takes a byte order mark's
//! U+FEFF, and whose greedy `\s*` after the closing dashes swallows blank lines before the
//! body), loads the block as YAML and reads single keys from it; a block that is not YAML
//! reads as having no keys, and the body is the text without the matched block.

use std::sync::LazyLock;

use regex::Regex;
use saphyr::{LoadableYamlNode, Scalar, Yaml};

/// Auggie's pattern, with JavaScript's `\s` spelled out: Rust's `\s` lacks U+FEFF.
static FRONT_MATTER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\A---[\s\x{FEFF}]*\n((?s:.)*?)\n---[\s\x{FEFF}]*\n").expect("a valid pattern")
});

/// A file's front matter as Auggie reads it.
#[derive(Debug, PartialEq, Eq)]
pub struct FrontMatter<'a> {
    /// The YAML mapping, when the block parses as one.
    keys: Option<Vec<(String, Value)>>,
    /// The text after the block (the whole text without one).
    pub body: &'a str,
}

/// One value, as Auggie turns it into a string or a boolean.
#[derive(Debug, PartialEq, Eq)]
enum Value {
    Text(String),
    Boolean(bool),
    Null,
}

impl<'a> FrontMatter<'a> {
    /// Splits `text` (a byte order mark kept: it makes the pattern fail, as in Auggie).
    pub fn parse(text: &'a str) -> FrontMatter<'a> {
        let Some(found) = FRONT_MATTER.captures(text) else { return FrontMatter { keys: None, body: text } };
        let whole = found.get(0).map_or(0, |m| m.end());
        let yaml = found.get(1).map_or("", |m| m.as_str());
        FrontMatter { keys: mapping(yaml), body: &text[whole..] }
    }

    /// Whether the text had a front matter block at all.
    pub fn has_block(&self) -> bool {
        self.keys.is_some()
    }

    /// `parseString`: a string trimmed, another scalar as its text, else `None`.
    pub fn string(&self, key: &str) -> Option<String> {
        match self.get(key)? {
            Value::Text(text) => Some(ctxgraph_db::js::js_trim(text).to_owned()),
            Value::Boolean(b) => Some(b.to_string()),
            Value::Null => None,
        }
    }

    /// `parseBoolean`: only a YAML boolean counts.
    pub fn boolean(&self, key: &str) -> Option<bool> {
        match self.get(key)? {
            Value::Boolean(b) => Some(*b),
            _ => None,
        }
    }

    fn get(&self, key: &str) -> Option<&Value> {
        self.keys.as_ref()?.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

/// The block's top-level keys, or `None` when it is not a YAML mapping (or not YAML).
fn mapping(yaml: &str) -> Option<Vec<(String, Value)>> {
    let docs = Yaml::load_from_str(yaml).ok()?;
    let Some(Yaml::Mapping(map)) = docs.first() else { return Some(Vec::new()) };
    Some(
        map.iter()
            .filter_map(|(k, v)| {
                let key = scalar_text(k)?;
                let value = match v {
                    Yaml::Value(Scalar::Boolean(b)) => Value::Boolean(*b),
                    Yaml::Value(Scalar::Null) => Value::Null,
                    other => Value::Text(scalar_text(other)?),
                };
                Some((key, value))
            })
            .collect(),
    )
}

fn scalar_text(value: &Yaml<'_>) -> Option<String> {
    match value {
        Yaml::Value(Scalar::String(s)) | Yaml::Representation(s, _, _) => Some(s.to_string()),
        Yaml::Value(Scalar::Integer(i)) => Some(i.to_string()),
        Yaml::Value(Scalar::FloatingPoint(f)) => Some(f.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_lines_after_the_block_are_swallowed_and_crlf_is_a_block() {
        let fm = FrontMatter::parse("---\ndescription: d\n---\n\n\nbody\n");
        assert_eq!((fm.body, fm.string("description").as_deref()), ("body\n", Some("d")));
        let crlf = FrontMatter::parse("---\r\ntype: always_apply\r\n---\r\nline\r\n");
        assert_eq!((crlf.body, crlf.string("type").as_deref()), ("line\r\n", Some("always_apply")));
    }

    #[test]
    fn a_byte_order_mark_or_an_unclosed_block_leaves_the_text_whole() {
        for text in ["\u{feff}---\ntype: manual\n---\nbody\n", "---\ntype: manual\nbody\n"] {
            let fm = FrontMatter::parse(text);
            assert_eq!((fm.body, fm.has_block()), (text, false));
        }
    }

    #[test]
    fn only_booleans_are_booleans_and_blank_strings_stay_blank() {
        let fm = FrontMatter::parse("---\nalwaysApply: \"true\"\ndescription: \"  \"\n---\nx\n");
        assert_eq!(fm.boolean("alwaysApply"), None);
        assert_eq!(fm.string("description").as_deref(), Some(""));
        assert_eq!(FrontMatter::parse("---\n[a\n---\nx\n").string("type"), None);
    }
}
