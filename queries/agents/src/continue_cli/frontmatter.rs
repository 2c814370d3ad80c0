//! CN4: how Continue splits a rule file into front matter and text, and CN5: which keys
//! make a rule not always applied.

use std::sync::LazyLock;

use regex::Regex;
use saphyr::{LoadableYamlNode, Scalar, Yaml};

/// A rule file as Continue parses it.
#[derive(Debug, PartialEq, Eq)]
pub struct Rule {
    /// The text Continue sends for it: after front matter trimmed, without one (or with a
    /// broken one) the whole file with CRLF made LF, untrimmed.
    pub markdown: String,
    /// The front matter's mapping, when it had one.
    keys: Vec<(String, Value)>,
}

/// A front-matter value, as far as JavaScript's truthiness and `=== true` see it.
#[derive(Debug, PartialEq, Eq)]
enum Value {
    Null,
    True,
    /// Any other value that is truthy (a non-empty string, a non-zero number, a list or a
    /// mapping, `[]` included).
    Truthy,
    /// `false`, `0`, `""`.
    Falsy,
}

fn value(yaml: &Yaml<'_>) -> Value {
    match yaml {
        Yaml::Value(Scalar::Null) => Value::Null,
        Yaml::Value(Scalar::Boolean(true)) => Value::True,
        Yaml::Value(Scalar::Boolean(false)) => Value::Falsy,
        Yaml::Value(Scalar::Integer(0)) => Value::Falsy,
        Yaml::Value(Scalar::FloatingPoint(f)) if f.into_inner() == 0.0 || f.is_nan() => Value::Falsy,
        Yaml::Value(Scalar::String(s)) | Yaml::Representation(s, _, _) if s.is_empty() => Value::Falsy,
        _ => Value::Truthy,
    }
}

fn as_str<'a>(value: &'a Yaml<'_>) -> Option<&'a str> {
    match value {
        Yaml::Value(Scalar::String(s)) | Yaml::Representation(s, _, _) => Some(s),
        _ => None,
    }
}

impl Rule {
    fn get(&self, key: &str) -> Option<&Value> {
        self.keys.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    fn truthy(&self, key: &str) -> bool {
        matches!(self.get(key), Some(Value::True | Value::Truthy))
    }

    /// CN5: why the rule is not always applied, or `None` when it is: `invokable` (truthy)
    /// drops it; `alwaysApply: true` keeps it; any other `alwaysApply` (null included) drops
    /// it; without `alwaysApply`, a truthy `globs` or `regex` drops it.
    pub fn not_always(&self) -> Option<&'static str> {
        if self.truthy("invokable") {
            return Some("invokable");
        }
        match self.get("alwaysApply") {
            Some(Value::True) => None,
            Some(_) => Some("alwaysApply is not true"),
            None if self.truthy("globs") => Some("globs"),
            None if self.truthy("regex") => Some("regex"),
            None => None,
        }
    }
}

/// CN4: CRLF becomes LF; the text is split at every line that is `---` and blanks (the
/// blanks may run over following empty lines); with at least three parts, the second is
/// YAML and the rest, joined again by `---`, is the text, trimmed. Broken YAML: no keys, the
/// whole text.
pub fn parse(content: &str) -> Rule {
    static FENCE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?m)^---\s*$").expect("valid pattern"));
    let normalized = content.replace("\r\n", "\n");
    let parts: Vec<&str> = FENCE.split(&normalized).collect();
    if parts.len() < 3 {
        return Rule { markdown: normalized, keys: Vec::new() };
    }
    let Ok(docs) = Yaml::load_from_str(parts[1]) else {
        return Rule { markdown: normalized, keys: Vec::new() };
    };
    let keys = match docs.first() {
        Some(Yaml::Mapping(map)) => {
            map.iter().filter_map(|(k, v)| as_str(k).map(|k| (k.to_owned(), value(v)))).collect()
        }
        _ => Vec::new(),
    };
    let markdown = ctxgraph_db::js::js_trim(&parts[2..].join("---")).to_owned();
    Rule { markdown, keys }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_and_the_keys_that_decide() {
        let rule = parse("---\r\nalwaysApply: true\r\nglobs: x\r\n---\r\n body \r\n");
        assert_eq!((rule.markdown.as_str(), rule.not_always()), ("body", None));
        assert_eq!(parse("---\nglobs: []\n---\nb").not_always(), Some("globs"));
        assert_eq!(parse("---\nglobs: \"\"\n---\nb").not_always(), None);
        assert_eq!(parse("---\nalwaysApply: ~\n---\nb").not_always(), Some("alwaysApply is not true"));
        assert_eq!(parse("---\ninvokable: yes\n---\nb").not_always(), Some("invokable"));
        // Text before the front matter is lost; a dash line in the body stays as `---`.
        assert_eq!(parse("intro\n---\na: 1\n---\nx\n---\ny").markdown, "x\n---\ny");
        // No front matter: the text as it is, untrimmed.
        assert_eq!(parse("plain\r\n\n").markdown, "plain\n\n");
    }
}
