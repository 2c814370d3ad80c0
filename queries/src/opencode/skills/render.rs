//! B5.8: the skills block's text.

use super::{Description, Origin, Skills};

/// The block's first two lines (opencode's words; ctxgraph's spec quotes them, B5).
const PREAMBLE: [&str; 2] = [
    "Skills provide specialized instructions and workflows for specific tasks.",
    "Use the skill tool to load a skill when a task matches its description.",
];
/// What the listing says when no skill is listed.
const NONE_AVAILABLE: &str = "No skills are currently available.";

/// B5.8: opencode's `escape` for a location: `&`, `<`, `>`, `"`, `'`, in that order.
pub fn escape_location(location: &str) -> String {
    location
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// One listed skill.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry<'a> {
    /// Its name (not escaped: opencode does not escape names or descriptions).
    pub name: &'a str,
    /// Its description.
    pub description: &'a str,
    /// Its location, escaped.
    pub location: String,
}

/// The skills the block lists (B5.5/B5.6): registered, allowed by `allowed(name)` (the
/// agent's `skill` permission), with a description; in registry order (`localeCompare`).
/// `builtin` is the built-in skill's description, from the opencode installation.
pub fn listed<'a>(skills: &'a Skills, builtin: &'a str, allowed: impl Fn(&str) -> bool) -> Vec<Entry<'a>> {
    skills
        .registry
        .iter()
        .filter(|skill| allowed(&skill.name))
        .filter_map(|skill| {
            let description = match skills.description(skill.origin) {
                Description::Builtin => builtin,
                Description::Text(text) => text,
                Description::Missing => return None,
            };
            let location = escape_location(&skills.location(skill.origin));
            Some(Entry { name: &skill.name, description, location })
        })
        .collect()
}

/// B5.8: the block's text for the listed skills.
pub fn block_text(entries: &[Entry<'_>]) -> String {
    let mut lines: Vec<String> = PREAMBLE.iter().map(|l| (*l).to_owned()).collect();
    if entries.is_empty() {
        lines.push(NONE_AVAILABLE.to_owned());
    } else {
        lines.push("<available_skills>".to_owned());
        for entry in entries {
            lines.push("  <skill>".to_owned());
            lines.push(format!("    <name>{}</name>", entry.name));
            lines.push(format!("    <description>{}</description>", entry.description));
            lines.push(format!("    <location>{}</location>", entry.location));
            lines.push("  </skill>".to_owned());
        }
        lines.push("</available_skills>".to_owned());
    }
    lines.join("\n")
}

/// Whether a registered skill is the built-in one.
pub fn is_builtin(origin: Origin) -> bool {
    origin == Origin::Builtin
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_in_opencode_order() {
        assert_eq!(escape_location("<built-in>"), "&lt;built-in&gt;");
        assert_eq!(escape_location("/a&b/'\"/SKILL.md"), "/a&amp;b/&#39;&quot;/SKILL.md");
        assert_eq!(escape_location("&lt;"), "&amp;lt;");
    }
}
