//! B5.3: a SKILL.md's frontmatter as opencode 1.18.33 reads it: `gray-matter` over `js-yaml`
//! 3's safe schema, retried once on a sanitised copy (`key: a: b` lines turned into block
//! scalars), and kept as a skill only when `name` is a string and `description` is a string
//! or absent.
//!
//! The YAML itself is parsed by `saphyr` (see `Cargo.toml` for why). Only what opencode looks
//! at is modelled: the top-level mapping and whether `name`/`description` are strings. Two
//! js-yaml behaviours a YAML 1.2 parser does not share are emulated here, on plain scalars
//! only: js-yaml 3 also resolves YAML 1.1 integers/floats (`0b1`, `1_000`, `1:30`) and
//! timestamps (`2024-01-02` becomes a `Date`), which makes such a `description` not a string.

use std::sync::LazyLock;

use regex::Regex;
use saphyr::{Scalar, ScalarStyle, Yaml, YamlLoader};
use saphyr_parser::Parser;

/// What opencode makes of one SKILL.md.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Frontmatter {
    /// A skill: `name` is a string, `description` a string or absent.
    Skill {
        /// The `name` field.
        name: String,
        /// The `description` field; `None` when absent (the skill is then never listed).
        description: Option<String>,
    },
    /// Parsed, but not a skill: opencode drops it without a word.
    NotASkill(NotASkill),
    /// The YAML does not parse, even sanitised: opencode logs the error, publishes a session
    /// error event and drops the skill.
    Invalid(YamlError),
}

/// Why a parsed SKILL.md is not a skill.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum NotASkill {
    /// No frontmatter, or frontmatter that is not a mapping.
    NoMapping,
    /// `name` is missing.
    NoName,
    /// `name` is there but not a string (a number, a list, `null`, a date …).
    NameNotString(&'static str),
    /// `description` is there but not a string.
    DescriptionNotString(&'static str),
}

/// A YAML error at a position of the SKILL.md (1-based line, 1-based column in characters).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct YamlError {
    /// The parser's message.
    pub message: String,
    /// 1-based line in the file.
    pub line: usize,
    /// 1-based column (characters) in the file.
    pub column: usize,
}

/// gray-matter's view of a file: the YAML text between the delimiters, and its first line's
/// number in the file (1-based).
struct Matter<'a> {
    yaml: &'a str,
    first_line: usize,
}

/// gray-matter: `---` at the very start (after a BOM), not `----`; the rest of that line is a
/// language name; the matter runs to the first `\n---` (or the end of the file).
fn split(text: &str) -> Option<Matter<'_>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text.strip_prefix("---")?;
    if rest.starts_with('-') {
        return None;
    }
    // The language name: up to the first line break (gray-matter slices it off whole).
    let language_end = rest.find(['\r', '\n']).map_or(rest.len(), |i| {
        if rest[i..].starts_with("\r\n") || rest[i..].starts_with('\n') { i } else { rest.len() }
    });
    let after_language = &rest[language_end..];
    let yaml = after_language.find("\n---").map_or(after_language, |end| &after_language[..end]);
    Some(Matter { yaml, first_line: 1 })
}

/// B5.3: what opencode makes of a SKILL.md's text.
pub fn parse(text: &str) -> Frontmatter {
    let Some(matter) = split(text) else { return Frontmatter::NotASkill(NotASkill::NoMapping) };
    // gray-matter: a matter that is empty once `#` comment lines are removed is `{}`.
    let blank = matter.yaml.lines().all(|line| line.trim().is_empty() || line.trim_start().starts_with('#'));
    if blank {
        return Frontmatter::NotASkill(NotASkill::NoMapping);
    }
    match load(matter.yaml) {
        Ok(doc) => classify(&doc),
        Err(first) => {
            let sanitized = sanitize(matter.yaml);
            match load(&sanitized) {
                Ok(doc) => classify(&doc),
                // opencode reports the error of the retry; positions of the original text are
                // what a user can act on, and the sanitising keeps line numbers.
                Err(_) => Frontmatter::Invalid(first.at(matter.first_line)),
            }
        }
    }
}

/// A scan error relative to the matter text (0-based line within it).
struct RawError {
    message: String,
    line: usize,
    column: usize,
}

impl RawError {
    fn at(self, first_line: usize) -> YamlError {
        // saphyr's lines are 1-based from the start of the matter text, which begins on the
        // `---` line itself (the language name's line break is part of it).
        YamlError { message: self.message, line: first_line + self.line - 1, column: self.column + 1 }
    }
}

fn load(yaml: &str) -> Result<Yaml<'_>, RawError> {
    let mut loader: YamlLoader<'_, Yaml<'_>> = YamlLoader::default();
    // Keep scalars as written: whether a plain scalar is a string is decided below, with
    // js-yaml's resolvers, not saphyr's.
    loader.early_parse(false);
    let mut parser = Parser::new_from_str(yaml);
    let error = |e: &saphyr::ScanError| RawError {
        message: e.info().to_owned(),
        line: e.marker().line(),
        column: e.marker().col(),
    };
    parser.load(&mut loader, false).map_err(|e| error(&e))?;
    if let Some(e) = loader.error() {
        return Err(error(e));
    }
    Ok(loader.into_documents().into_iter().next().unwrap_or(Yaml::Value(Scalar::Null)))
}

fn classify(doc: &Yaml<'_>) -> Frontmatter {
    let Yaml::Mapping(map) = doc else { return Frontmatter::NotASkill(NotASkill::NoMapping) };
    let field = |key: &str| {
        map.iter().find_map(|(k, v)| match k {
            Yaml::Representation(text, _, _) if text == key => Some(v),
            Yaml::Value(Scalar::String(text)) if text == key => Some(v),
            _ => None,
        })
    };
    let name = match field("name").map(as_js_string) {
        None => return Frontmatter::NotASkill(NotASkill::NoName),
        Some(Err(kind)) => return Frontmatter::NotASkill(NotASkill::NameNotString(kind)),
        Some(Ok(name)) => name,
    };
    let description = match field("description").map(as_js_string) {
        None => None,
        Some(Err(kind)) => return Frontmatter::NotASkill(NotASkill::DescriptionNotString(kind)),
        Some(Ok(text)) => Some(text),
    };
    Frontmatter::Skill { name, description }
}

/// The value as js-yaml 3 (safe schema) would load it, if that is a string; otherwise the
/// JS type it would have.
fn as_js_string(value: &Yaml<'_>) -> Result<String, &'static str> {
    match value {
        Yaml::Representation(text, style, tag) => {
            if let Some(tag) = tag {
                // `!!str` (or a local `!str`): a string whatever it looks like.
                return if tag.suffix == "str" { Ok(text.to_string()) } else { Err("a tagged value") };
            }
            match style {
                ScalarStyle::Plain => match js_yaml_plain_type(text) {
                    None => Ok(text.to_string()),
                    Some(kind) => Err(kind),
                },
                _ => Ok(text.to_string()),
            }
        }
        Yaml::Value(Scalar::String(text)) => Ok(text.to_string()),
        Yaml::Value(Scalar::Null) => Err("null"),
        Yaml::Value(Scalar::Boolean(_)) => Err("a boolean"),
        Yaml::Value(Scalar::Integer(_) | Scalar::FloatingPoint(_)) => Err("a number"),
        Yaml::Sequence(_) => Err("a list"),
        Yaml::Mapping(_) => Err("a mapping"),
        _ => Err("not a string"),
    }
}

/// js-yaml 3's `DEFAULT_SAFE_SCHEMA` implicit resolvers for a plain scalar: the JS type a
/// non-string resolves to, or `None` for a string.
fn js_yaml_plain_type(text: &str) -> Option<&'static str> {
    static NULL: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^(?:~|null|Null|NULL|)$").unwrap());
    static BOOL: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^(?:true|True|TRUE|false|False|FALSE)$").unwrap());
    // js-yaml 3 `int`: binary, octal (leading 0), decimal, hex, sexagesimal, `_` separators.
    static INT: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"^[-+]?(?:0b[01_]+|0x[0-9a-fA-F_]+|0[0-7_]+|(?:0|[1-9][0-9_]*)|[1-9][0-9_]*(?::[0-5]?[0-9])+)$",
        )
        .unwrap()
    });
    static FLOAT: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"^(?:[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?|\.[0-9_]+(?:[eE][-+]?[0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        )
        .unwrap()
    });
    static TIMESTAMP: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"^(?:[0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::?[0-9]{2})?))?)$",
        )
        .unwrap()
    });
    if NULL.is_match(text) {
        Some("null")
    } else if BOOL.is_match(text) {
        Some("a boolean")
    } else if INT.is_match(text)
        || (FLOAT.is_match(text)
            && text.chars().any(|c| c.is_ascii_digit() || c == 'i' || c == 'I' || c == 'n' || c == 'N'))
    {
        Some("a number")
    } else if TIMESTAMP.is_match(text) {
        Some("a date")
    } else {
        None
    }
}

/// opencode's `sanitize`: in the matter, an unindented `key: value` line whose unquoted
/// value contains `:` becomes `key: |-` plus the value indented, so `description: Use when:
/// …` loads as a string. Line count is kept except for those lines (one becomes two).
fn sanitize(yaml: &str) -> String {
    static KEY: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^([a-zA-Z_][a-zA-Z0-9_]*)\s*:\s*(.*)$").unwrap());
    let mut out = Vec::new();
    for line in yaml.split('\n') {
        let (line, cr) = line.strip_suffix('\r').map_or((line, ""), |l| (l, "\r"));
        let trimmed = line.trim();
        let keep = trimmed.starts_with('#') || trimmed.is_empty() || line.starts_with(char::is_whitespace);
        let converted = (!keep).then(|| KEY.captures(line)).flatten().and_then(|caps| {
            let value = caps[2].trim();
            let plain = !(value.is_empty()
                || value == ">"
                || value == "|"
                || value.starts_with('"')
                || value.starts_with('\''));
            (plain && value.contains(':')).then(|| format!("{}: |-\n  {value}", &caps[1]))
        });
        match converted {
            Some(block) => out.push(block),
            None => out.push(format!("{line}{cr}")),
        }
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(name: &str, description: Option<&str>) -> Frontmatter {
        Frontmatter::Skill { name: name.to_owned(), description: description.map(str::to_owned) }
    }

    #[test]
    fn strings_in_every_style() {
        assert_eq!(parse("---\nname: a\ndescription: plain\n---\nbody"), skill("a", Some("plain")));
        assert_eq!(parse("---\nname: a\ndescription: \"q\\tx\"\n---\n"), skill("a", Some("q\tx")));
        assert_eq!(
            parse("---\nname: a\ndescription: >\n  folded\n  text\n---\n"),
            skill("a", Some("folded text\n"))
        );
        assert_eq!(parse("---\r\nname: a\r\ndescription: crlf\r\n---\r\n"), skill("a", Some("crlf")));
        assert_eq!(parse("\u{feff}---\nname: a\n---\n"), skill("a", None));
        assert_eq!(parse("---\nname: yes\ndescription: yes\n---\n"), skill("yes", Some("yes")));
    }

    #[test]
    fn colons_are_sanitised() {
        assert_eq!(
            parse("---\nname: a\ndescription: Use when: asked\n---\n"),
            skill("a", Some("Use when: asked"))
        );
    }

    #[test]
    fn js_yaml_non_strings() {
        for (value, kind) in [
            ("42", "a number"),
            ("null", "null"),
            ("2024-01-02", "a date"),
            ("true", "a boolean"),
            ("1_000", "a number"),
            ("[a]", "a list"),
        ] {
            assert_eq!(
                parse(&format!("---\nname: a\ndescription: {value}\n---\n")),
                Frontmatter::NotASkill(NotASkill::DescriptionNotString(kind)),
                "{value}"
            );
        }
        assert_eq!(parse("just text"), Frontmatter::NotASkill(NotASkill::NoMapping));
        assert_eq!(parse("----\nname: a\n---\n"), Frontmatter::NotASkill(NotASkill::NoMapping));
        assert_eq!(parse("---\ndescription: d\n---\n"), Frontmatter::NotASkill(NotASkill::NoName));
    }

    #[test]
    fn errors_carry_the_file_position() {
        let Frontmatter::Invalid(error) = parse("---\nname: bad\ndescription: [unclosed\n---\n") else {
            panic!("expected an error")
        };
        assert_eq!((error.line, error.column > 0), (4, true), "{error:?}");
        assert!(matches!(parse("---\nname: a\nname: b\n---\n"), Frontmatter::Invalid(_)));
    }
}
