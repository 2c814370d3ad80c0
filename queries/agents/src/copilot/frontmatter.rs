//! CP6: what Copilot reads from an instruction file's front matter: the patterns it applies
//! to (`applyTo`, else `paths:`), its description, and whether it excludes the coding agent.

use std::sync::LazyLock;

use regex::Regex;
use saphyr::{LoadableYamlNode, Scalar, Yaml};

/// The agent name that `excludeAgent` drops a file for (Copilot CLI counts as it).
const CODING_AGENT: &str = "coding-agent";

/// The front matter's facts (all empty for a file without one).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FrontMatter {
    /// Whether the file opens with a closed `---` block.
    pub present: bool,
    /// Whether the YAML between the fences parsed; when not, only `applyTo`/`paths:` are
    /// picked out of it line by line.
    pub yaml_ok: bool,
    /// The patterns of `applyTo` (or of `paths:` without it), each trimmed, empty ones
    /// dropped; empty when neither key holds a string or a list of strings.
    pub patterns: Vec<String>,
    /// Which key the patterns came from.
    pub key: Option<&'static str>,
    /// `description`, its lines joined by spaces and trimmed.
    pub description: String,
    /// `excludeAgent` names the coding agent (a string, or a list holding it).
    pub excludes_coding_agent: bool,
}

impl FrontMatter {
    /// CP6: a pattern list that is one pattern for every file (`**`, `*`, `**/*`) does not
    /// make the file conditional.
    pub fn is_catch_all(&self) -> bool {
        matches!(self.patterns.as_slice(), [one] if matches!(one.as_str(), "**" | "*" | "**/*"))
    }

    /// CP6: the file is conditional (a table row at start-up, attached to reads it matches).
    pub fn is_conditional(&self) -> bool {
        !self.patterns.is_empty() && !self.is_catch_all()
    }
}

/// CP6: the front matter of `text` (BOM already removed). It must open the file: `---` on
/// the first line (spaces or tabs may follow), closed by the next line that is `---`.
pub fn parse(text: &str) -> FrontMatter {
    let Some(body) = block(text) else { return FrontMatter::default() };
    let mut fm = FrontMatter { present: true, ..FrontMatter::default() };
    match Yaml::load_from_str(body).ok().as_ref().and_then(|docs| docs.first()) {
        Some(Yaml::Mapping(map)) => {
            fm.yaml_ok = true;
            let get = |key: &str| map.iter().find(|(k, _)| as_str(k) == Some(key)).map(|(_, v)| v);
            for key in ["applyTo", "paths"] {
                if let Some(value) = get(key) {
                    let patterns = patterns_of(value);
                    if !patterns.is_empty() {
                        fm.patterns = patterns;
                        fm.key = Some(key);
                        break;
                    }
                }
            }
            if let Some(description) = get("description").and_then(as_str) {
                fm.description = description.split_whitespace().collect::<Vec<_>>().join(" ");
            }
            fm.excludes_coding_agent = get("excludeAgent").is_some_and(|v| match v {
                Yaml::Sequence(items) => items.iter().any(|i| as_str(i) == Some(CODING_AGENT)),
                other => as_str(other) == Some(CODING_AGENT),
            });
        }
        Some(_) => fm.yaml_ok = true,
        None => {
            // Broken YAML (or an empty block): the patterns line by line, nothing else.
            static LINE: LazyLock<Regex> =
                LazyLock::new(|| Regex::new(r"(?m)^(applyTo|paths):[ \t]+(.*)$").expect("valid pattern"));
            static COMMENT: LazyLock<Regex> =
                LazyLock::new(|| Regex::new(r"\s+#.*$").expect("valid pattern"));
            for key in ["applyTo", "paths"] {
                let Some(caps) = LINE.captures_iter(body).find(|c| &c[1] == key) else { continue };
                let value = COMMENT.replace(caps[2].trim_end_matches('\r'), "");
                let value = value.trim();
                let value = value
                    .strip_prefix(['"', '\''])
                    .and_then(|v| v.strip_suffix(['"', '\'']))
                    .unwrap_or(value);
                let patterns = split(value);
                if !patterns.is_empty() {
                    fm.patterns = patterns;
                    fm.key = Some(if key == "applyTo" { "applyTo" } else { "paths" });
                    break;
                }
            }
        }
    }
    fm
}

/// The text between the fences, or `None` when the file does not open with a closed block.
fn block(text: &str) -> Option<&str> {
    let rest = text.strip_prefix("---")?;
    let first_end = rest.find('\n')?;
    if !rest[..first_end].trim_end_matches('\r').chars().all(|c| c == ' ' || c == '\t') {
        return None;
    }
    let body_start = 3 + first_end + 1;
    let mut offset = body_start;
    for line in text[body_start..].split_inclusive('\n') {
        if line.trim_end_matches(['\n', '\r']).trim_end_matches([' ', '\t']) == "---" {
            return Some(text[body_start..offset].trim_end_matches(['\n', '\r']));
        }
        offset += line.len();
    }
    None
}

fn as_str<'a>(value: &'a Yaml<'_>) -> Option<&'a str> {
    match value {
        Yaml::Value(Scalar::String(s)) | Yaml::Representation(s, _, _) => Some(s),
        _ => None,
    }
}

/// A string is a comma-separated list; a list holds strings.
fn patterns_of(value: &Yaml<'_>) -> Vec<String> {
    match value {
        Yaml::Sequence(items) => items.iter().filter_map(as_str).flat_map(split).collect(),
        other => as_str(other).map(split).unwrap_or_default(),
    }
}

/// Splits at the commas outside braces (`**/*.{ts,js}` is one pattern), trims, drops empties.
fn split(value: &str) -> Vec<String> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0usize, 0);
    for (i, c) in value.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&value[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&value[start..]);
    parts.into_iter().map(str::trim).filter(|p| !p.is_empty()).map(str::to_owned).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_of_apply_to() {
        let fm = parse("---\napplyTo: \"src/**/*.ts, **/*.py\"\ndescription: >\n  two\n  lines\n---\nx\n");
        assert_eq!(fm.patterns, ["src/**/*.ts", "**/*.py"]);
        assert_eq!(parse("---\napplyTo: \"**/*.{ts,js}, a\"\n---\n").patterns, ["**/*.{ts,js}", "a"]);
        assert_eq!(fm.description, "two lines");
        assert!(fm.is_conditional());
        assert!(parse("---\napplyTo: [\"**\"]\n---\n").is_catch_all());
        assert!(!parse("---\napplyTo: \"\"\n---\n").is_conditional());
        assert!(!parse("  ---\napplyTo: \"a\"\n---\n").present);
        assert!(!parse("---\napplyTo: \"a\"\nno end\n").present);
        let broken = parse("---\nfoo: [bad\napplyTo: \"**/*.ts\" # c\nexcludeAgent: coding-agent\n---\n");
        assert!(!broken.yaml_ok && !broken.excludes_coding_agent);
        assert_eq!(broken.patterns, ["**/*.ts"]);
        assert!(parse("---\r\napplyTo: \"**/*.ts\"\r\n---\r\nx\r\n").is_conditional());
        assert!(parse("---\nexcludeAgent: [\"coding-agent\"]\n---\n").excludes_coding_agent);
    }
}
