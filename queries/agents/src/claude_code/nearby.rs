//! CC11/CC12: what Claude Code appends to a Read result: the rule files of the directories
//! between the working directory and the file, and the rules whose `paths:` match it; then
//! (CC21) the skills of those directories' own `.claude/skills`.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use ignore::gitignore::GitignoreBuilder;
use serde::Serialize;

use super::listing::Entry;
use super::request_prose::RequestProse;
use super::{Fate, Kind, Loader, MemoryFile, claude_md_context, config_dir, walk_dirs};
use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::path;

/// What a Read of one file brings along.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct ReadAttachment {
    /// The file read.
    pub file: PathBuf,
    /// Every file looked at, in order; the sent ones are attached.
    pub files: Vec<MemoryFile>,
    /// CC21: the folders between the working directory and the file that have their own
    /// `.claude/skills` with skills in it, deepest first.
    pub skill_dirs: Vec<SkillDir>,
}

/// CC21: a folder below the working directory whose `.claude/skills` a Read found.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct SkillDir {
    /// The folder that holds `.claude`, relative to the working directory, `/`-separated.
    pub relative: String,
    /// Its skills, by name.
    #[serde(skip)]
    pub skills: Vec<Entry>,
}

impl SkillDir {
    /// The reminder that names the folder's new skills.
    pub fn announcement(&self, words: &RequestProse) -> String {
        let names: String = self.skills.iter().flat_map(|s| ["\n- ", s.name.as_str()]).collect();
        format!(
            "<system-reminder>\n{}{}/.claude/skills{}{names}\n</system-reminder>",
            words.new_skills[0], self.relative, words.new_skills[1]
        )
    }

    /// One skill's line in the skill list a Read adds.
    pub fn line(&self, skill: &Entry, words: &RequestProse) -> String {
        let description = skill.description.as_deref().unwrap_or(&words.skill_fallback);
        format!(
            "- {}: {description}{}{}/.claude/skills{}{}/)",
            skill.name, words.from_folder[0], self.relative, words.from_folder[1], self.relative
        )
    }
}

impl ReadAttachment {
    /// Why a file is attached to this Read, or why not, with the rule behind it.
    pub fn reason(&self, file: &MemoryFile, cwd: &Path, approval: &super::Approval) -> String {
        match (&file.fate, &file.parent) {
            (Fate::Sent, None) => {
                "a rule file in a directory between the working directory and the file read (CC11)".to_owned()
            }
            (Fate::AlreadyLoaded, None) => {
                "not attached again: the session already holds it (CC12)".to_owned()
            }
            _ => file.reason(cwd, approval),
        }
    }

    /// The files attached, in order.
    pub fn sent(&self) -> impl Iterator<Item = &MemoryFile> {
        self.files.iter().filter(|f| f.is_sent())
    }

    /// CC11: each attached file as its own `<system-reminder>` (no label), then (CC21) each
    /// found skills folder's announcement and one skill list of them all, joined by a blank
    /// line; empty when nothing is attached.
    pub fn text(&self, words: &RequestProse) -> String {
        let mut parts: Vec<String> = self.sent().map(reminder).collect();
        parts.extend(self.skill_dirs.iter().map(|dir| dir.announcement(words)));
        if !self.skill_dirs.is_empty() {
            let lines: Vec<String> = self.skill_lines(words).into_iter().map(|(_, line)| line).collect();
            parts.push(format!(
                "<system-reminder>\n{}\n\n{}\n</system-reminder>",
                words.skills_header,
                lines.join("\n")
            ));
        }
        parts.join("\n\n")
    }

    /// CC21: the found skills' lines, all folders' skills sorted by name together.
    pub fn skill_lines(&self, words: &RequestProse) -> Vec<(&Entry, String)> {
        let mut lines: Vec<(&Entry, String)> = self
            .skill_dirs
            .iter()
            .flat_map(|dir| dir.skills.iter().map(move |skill| (skill, dir.line(skill, words))))
            .collect();
        lines.sort_by(|a, b| a.0.name.cmp(&b.0.name));
        lines
    }
}

/// CC11: one attached file, its text untrimmed and followed by one line break.
pub fn reminder(file: &MemoryFile) -> String {
    format!(
        "<system-reminder>\nContents of {}:\n\n{}\n</system-reminder>",
        path::display(&file.source),
        file.content
    )
}

/// CC11: what a Read of `file` attaches, given the files the session already holds (the
/// first message's, CC12).
#[salsa::tracked(returns(ref))]
pub fn read_attachment(db: &dyn Db, ws: Workspace, file: PathBuf) -> ReadAttachment {
    let context = claude_md_context(db, ws);
    let cwd = ws.cwd(db).clone();
    let home = ws.host(db).home(db).clone();
    // Nested loads never follow imports out of the working directory (CC8).
    // A Read attaches each text untrimmed (CC11).
    let excludes = super::excludes::claude_md_excludes(db, ws);
    let mut loader = Loader::new(db, &cwd, &home, false, false, excludes);

    // The user's rules with `paths:`, matched from the working directory.
    loader.rules_for_read(&config_dir(db, ws).join("rules"), Kind::User, &cwd, &file, false);
    // Each directory below the working directory down to the file's: CLAUDE.md,
    // .claude/CLAUDE.md, CLAUDE.local.md, then .claude/rules, unconditional then matching.
    let parent = file.parent().unwrap_or(&file);
    if parent != cwd && parent.starts_with(&cwd) {
        for dir in walk_dirs(parent).into_iter().filter(|d| d.starts_with(&cwd) && *d != cwd) {
            loader.load(&dir.join("CLAUDE.md"), Kind::Project, 0, None, false);
            loader.load(&dir.join(".claude").join("CLAUDE.md"), Kind::Project, 0, None, false);
            loader.load(&dir.join("CLAUDE.local.md"), Kind::Local, 0, None, false);
            loader.rules_for_read(&dir.join(".claude").join("rules"), Kind::Project, &dir, &file, true);
        }
    }
    // The working directory and those above it: their rules with matching `paths:`.
    for dir in walk_dirs(&cwd) {
        loader.rules_for_read(&dir.join(".claude").join("rules"), Kind::Project, &dir, &file, false);
    }

    // CC12: what the session already holds is not attached again, nor the file read.
    let mut held: HashSet<&Path> = context.sent().map(|f| f.source.as_path()).collect();
    held.insert(&file);
    let mut files = loader.files;
    hold_back(&mut files, &held);
    let skill_dirs = found_skill_dirs(db, &cwd, parent);
    ReadAttachment { file, files, skill_dirs }
}

/// CC21: the folders below the working directory down to `parent` with skills of their own,
/// deepest first.
fn found_skill_dirs(db: &dyn Db, cwd: &Path, parent: &Path) -> Vec<SkillDir> {
    if parent == cwd || !parent.starts_with(cwd) {
        return Vec::new();
    }
    let mut dirs = Vec::new();
    for dir in walk_dirs(parent).into_iter().filter(|d| d.starts_with(cwd) && d != cwd).rev() {
        let mut found = super::listing::Listings::default();
        super::listing::skills_in(
            db,
            &dir.join(".claude/skills"),
            "a found folder's",
            &mut found,
            &mut Vec::new(),
        );
        if found.skills.is_empty() {
            continue;
        }
        found.skills.sort_by(|a, b| a.name.cmp(&b.name));
        let relative = dir.strip_prefix(cwd).unwrap_or(&dir).to_string_lossy().replace('\\', "/");
        dirs.push(SkillDir { relative, skills: found.skills });
    }
    dirs
}

/// CC12: Reads of `files` one after the other in one session: each attaches only what
/// neither the first message, an earlier Read's attachments, nor an earlier read file holds.
pub fn reads_in_session(db: &dyn Db, ws: Workspace, files: &[PathBuf]) -> Vec<ReadAttachment> {
    let mut held: HashSet<PathBuf> = HashSet::new();
    let mut announced: HashSet<String> = HashSet::new();
    let mut out = Vec::with_capacity(files.len());
    for file in files {
        let mut attachment = read_attachment(db, ws, file.clone()).clone();
        hold_back(&mut attachment.files, &held.iter().map(PathBuf::as_path).collect());
        // CC21: a skills folder is announced once per session.
        attachment.skill_dirs.retain(|dir| announced.insert(dir.relative.clone()));
        held.insert(file.clone());
        held.extend(attachment.sent().map(|f| f.source.clone()));
        out.push(attachment);
    }
    out
}

/// CC12 in a recorded session: a Read of `file` attaches only what neither the first message
/// nor the session's last request (`held`, rebuilt from its transcript, CC40) holds.
pub fn read_after(db: &dyn Db, ws: Workspace, file: &Path, held: &HashSet<&Path>) -> ReadAttachment {
    let mut attachment = read_attachment(db, ws, file.to_path_buf()).clone();
    hold_back(&mut attachment.files, held);
    attachment
}

fn hold_back(files: &mut [MemoryFile], held: &HashSet<&Path>) {
    for looked in files {
        if looked.is_sent() && held.contains(looked.source.as_path()) {
            looked.fate = Fate::AlreadyLoaded;
            looked.content.clear();
        }
    }
}

impl Loader<'_> {
    /// The rules below `rules`: those whose `paths:` match `file` (relative to `base`) are
    /// sent, the others stay held back; rules without `paths:` are kept only where the
    /// first message did not already load them (`unconditional`).
    fn rules_for_read(&mut self, rules: &Path, kind: Kind, base: &Path, file: &Path, unconditional: bool) {
        let start = self.files.len();
        self.rules_dir(rules, kind);
        // Claude Code walks the directory twice: the rules without `paths:` first, then
        // those whose `paths:` match.
        let (mut plain, mut conditional) = (Vec::new(), Vec::new());
        for mut looked in self.files.split_off(start) {
            match &looked.fate {
                Fate::Conditional { globs } => {
                    if globs_match(globs, base, file) {
                        let globs = globs.clone();
                        looked.fate = Fate::Matched { globs };
                    }
                    conditional.push(looked);
                }
                Fate::Sent if !unconditional => {}
                _ => plain.push(looked),
            }
        }
        self.files.append(&mut plain);
        self.files.append(&mut conditional);
    }
}

/// CC6: `paths:` globs match the file's path relative to `base` with gitignore rules (a
/// pattern without `/` matches at any depth; a match on a parent directory counts).
fn globs_match(globs: &[String], base: &Path, file: &Path) -> bool {
    let Ok(relative) = file.strip_prefix(base) else { return false };
    if relative.as_os_str().is_empty() {
        return false;
    }
    let mut builder = GitignoreBuilder::new(base);
    for glob in globs {
        // A glob the matcher cannot compile is left out, as Claude Code drops it.
        let _ = builder.add_line(None, glob);
    }
    builder.build().is_ok_and(|set| set.matched_path_or_any_parents(relative, false).is_ignore())
}
