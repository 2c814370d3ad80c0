//! PI7–PI9, PI12: the system message as pi's `buildSystemPrompt` writes it, with where each
//! piece starts, so the profile places its blocks at the bytes pi wrote.

use super::skills::escape_xml;
use super::{Candidate, PiContext, Wording};

/// The Project Context section's heading and label (format markers, PI2).
pub const CONTEXT_OPEN: &str = "\n\n# Project Context\n\nProject-specific instructions and guidelines:\n\n";

/// What one placed piece of the message is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum What<'a> {
    /// PI7: pi's base prompt.
    BasePrompt,
    /// A file's text: a prompt file or a context file.
    File(&'a Candidate),
    /// PI12: the listing's opening sentences.
    SkillsIntro,
    /// PI12: one skill's entry (`<skill>` … `</skill>`), by its index in `skills.found`.
    Skill(usize),
    /// PI9: the date and working directory lines.
    DateAndCwd,
}

/// One piece, where it starts in the text.
#[derive(Clone, Debug)]
pub struct Placed<'a> {
    /// What it is.
    pub what: What<'a>,
    /// Its byte range.
    pub range: std::ops::Range<usize>,
}

/// `Date.toDateString()` (`Sun Nov 29 2026`, the host's date) as pi writes it
/// (`2026-11-29`); `None` when it is not such a date.
pub fn iso_date(date: &str) -> Option<String> {
    const MONTHS: [&str; 12] =
        ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let mut parts = date.split(' ');
    let (_, month, day, year) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let month = MONTHS.iter().position(|m| *m == month)? + 1;
    let day: u32 = day.parse().ok()?;
    let year: i32 = year.parse().ok()?;
    Some(format!("{year:04}-{month:02}-{day:02}"))
}

struct Writer<'a> {
    text: String,
    placed: Vec<Placed<'a>>,
}

impl<'a> Writer<'a> {
    fn piece(&mut self, what: What<'a>, text: &str) {
        let start = self.text.len();
        self.text.push_str(text);
        self.placed.push(Placed { what, range: start..self.text.len() });
    }
}

/// The whole system message and its placed pieces; `date` as pi writes it.
pub fn system_message<'a>(ctx: &'a PiContext, wording: &Wording, date: &str) -> (String, Vec<Placed<'a>>) {
    let mut w = Writer { text: String::new(), placed: Vec::new() };
    match ctx.system_prompt() {
        Some(file) => w.piece(What::File(file), &file.text),
        None => w.piece(What::BasePrompt, &wording.base_prompt),
    }
    if let Some(append) = ctx.append_prompt() {
        w.text.push_str("\n\n");
        w.piece(What::File(append), &append.text);
    }
    let mut files = ctx.sent().peekable();
    if files.peek().is_some() {
        w.text.push_str(CONTEXT_OPEN);
        for file in files {
            w.text.push_str("## ");
            w.text.push_str(&file.source.to_string_lossy());
            w.text.push_str("\n\n");
            w.piece(What::File(file), &file.text);
            w.text.push_str("\n\n");
        }
    }
    let listed: Vec<(usize, &super::skills::Skill)> = ctx
        .skills
        .found
        .iter()
        .enumerate()
        .filter(|(_, s)| s.fate == super::skills::SkillFate::Listed)
        .collect();
    if !listed.is_empty() {
        w.text.push_str("\n\n");
        w.piece(What::SkillsIntro, &wording.skills_intro);
        w.text.push_str("\n\n<available_skills>");
        for (i, skill) in listed {
            w.text.push('\n');
            let entry = format!(
                "  <skill>\n    <name>{}</name>\n    <description>{}</description>\n    <location>{}</location>\n  </skill>",
                escape_xml(&skill.name),
                escape_xml(&skill.description),
                escape_xml(&skill.path.to_string_lossy())
            );
            w.piece(What::Skill(i), &entry);
        }
        w.text.push_str("\n</available_skills>");
    }
    let cwd = ctx.cwd.to_string_lossy().replace('\\', "/");
    w.piece(What::DateAndCwd, &format!("\nCurrent date: {date}\nCurrent working directory: {cwd}"));
    (w.text, w.placed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hosts_date_is_written_as_pi_writes_it() {
        assert_eq!(iso_date("Sun Nov 29 2026").as_deref(), Some("2026-11-29"));
        assert_eq!(iso_date("Mon Mar 02 2026").as_deref(), Some("2026-03-02"));
        assert_eq!(iso_date(""), None);
        assert_eq!(iso_date("Sun Foo 29 2026"), None);
    }
}
