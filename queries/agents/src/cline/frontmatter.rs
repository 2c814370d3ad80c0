//! CL6: what Cline reads from a rule file's front matter: its `name:` and whether it is
//! disabled. Other keys (`paths:`, `description:`) change nothing.

use saphyr::{LoadableYamlNode, Scalar, Yaml};

/// A rule file as Cline parses it.
#[derive(Debug, PartialEq, Eq)]
pub struct Rule<'a> {
    /// `name:`, trimmed; `None` when absent, null or blank.
    pub name: Option<String>,
    /// `disabled: true`, or `enabled: false` when `disabled` is absent.
    pub disabled: bool,
    /// The text after the front matter (the whole text without one), not yet trimmed.
    pub body: &'a str,
}

/// Splits `text` (BOM already removed) the way Cline's pattern
/// `^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$` does: the opening line is exactly `---`,
/// the block ends at the first following `\n---`, whatever comes after those dashes.
fn split(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_prefix("---")?;
    let rest = rest.strip_prefix('\r').unwrap_or(rest);
    let inner = rest.strip_prefix('\n')?;
    let close = inner.find("\n---")?;
    let yaml = inner[..close].strip_suffix('\r').unwrap_or(&inner[..close]);
    let after = &inner[close + "\n---".len()..];
    let after = after.strip_prefix('\r').unwrap_or(after);
    Some((yaml, after.strip_prefix('\n').unwrap_or(after)))
}

fn as_str<'a>(value: &'a Yaml<'_>) -> Option<&'a str> {
    match value {
        Yaml::Value(Scalar::String(s)) | Yaml::Representation(s, _, _) => Some(s),
        _ => None,
    }
}

fn is_null(value: &Yaml<'_>) -> bool {
    matches!(value, Yaml::Value(Scalar::Null))
}

/// A boolean key: `None` when absent or null, an error for any other type.
fn boolean(map: &saphyr::Mapping<'_>, key: &str) -> Result<Option<bool>, String> {
    match map.iter().find(|(k, _)| as_str(k) == Some(key)).map(|(_, v)| v) {
        None => Ok(None),
        Some(value) if is_null(value) => Ok(None),
        Some(Yaml::Value(Scalar::Boolean(b))) => Ok(Some(*b)),
        Some(_) => Err(format!("its front matter's `{key}` is not a boolean")),
    }
}

/// CL6: the rule in `text`, or why Cline drops the file.
pub fn parse(text: &str) -> Result<Rule<'_>, String> {
    let Some((yaml, body)) = split(text) else { return Ok(Rule { name: None, disabled: false, body: text }) };
    let docs = Yaml::load_from_str(yaml).map_err(|err| format!("its front matter is not YAML: {err}"))?;
    let Some(Yaml::Mapping(map)) = docs.first() else {
        // A scalar or a list counts as no keys at all.
        return Ok(Rule { name: None, disabled: false, body });
    };
    let name = match map.iter().find(|(k, _)| as_str(k) == Some("name")).map(|(_, v)| v) {
        None => None,
        Some(value) if is_null(value) => None,
        Some(value) => match as_str(value) {
            Some(name) => Some(ctxgraph_db::js::js_trim(name).to_owned()).filter(|n| !n.is_empty()),
            None => return Err("its front matter's `name` is not a string".to_owned()),
        },
    };
    // `enabled` is looked at only when `disabled` is absent.
    let disabled = match boolean(map, "disabled")? {
        Some(disabled) => disabled,
        None => boolean(map, "enabled")? == Some(false),
    };
    Ok(Rule { name, disabled, body })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_block_ends_at_the_first_dash_line_and_keys_are_typed() {
        let rule = parse("---\r\nname: \" T \"\r\n---\r\nbody\n").expect("parses");
        assert_eq!((rule.name.as_deref(), rule.disabled, rule.body), (Some("T"), false, "body\n"));
        // Not front matter: a space after the opening dashes.
        assert_eq!(parse("--- \nname: x\n---\nb").expect("parses").name, None);
        assert!(parse("---\nname: 5\n---\nb").is_err());
        assert!(parse("---\nenabled: \"no\"\n---\nb").is_err());
        assert!(parse("---\nenabled: false\n---\nb").expect("parses").disabled);
        // `disabled` decides when present, whatever `enabled` says.
        assert!(!parse("---\ndisabled: false\nenabled: false\n---\nb").expect("parses").disabled);
        assert!(parse("---\ndisabled: true\nenabled: 3\n---\nb").expect("parses").disabled);
        assert!(parse("---\nname: [unclosed\n---\nb").is_err());
    }
}
