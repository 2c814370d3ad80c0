//! B5.8: the skills block's text.

use super::{Description, Origin, Skills};

/// opencode's own sentences in the block, as the installation supplies them (L2) or as
/// their placeholders (L3): ctxgraph writes only the listing's structure around them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prose<'a> {
    /// The block's first line: what skills are.
    pub intro: &'a str,
    /// Its second line: when to load a skill with the skill tool.
    pub how_to_load: &'a str,
    /// The line standing in for the listing when no skill is listed.
    pub none_available: &'a str,
    /// The built-in skill's description.
    pub builtin_description: &'a str,
}

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

/// B5.8: the block's text for the listed skills: the two opening lines, then the listing.
pub fn block_text(prose: &Prose<'_>, entries: &[Entry<'_>]) -> String {
    let mut lines: Vec<String> = vec![prose.intro.to_owned(), prose.how_to_load.to_owned()];
    if entries.is_empty() {
        lines.push(prose.none_available.to_owned());
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
