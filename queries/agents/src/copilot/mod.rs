//! The GitHub Copilot CLI profile (`@github/copilot` 1.0.102): the custom instructions it
//! puts in its system message and what a `view` attaches. Rule ids (CP1–CP16) are defined
//! in `docs/profiles/copilot.md`, each with the recorded case that confirms it.
//!
//! Copilot sends its rule files in one section of the system message, right after its tool
//! descriptions (CP1): each whole-file instruction (`copilot-instructions.md`, `AGENTS.md`,
//! `CLAUDE.md`, `GEMINI.md`) in a `<custom_instruction>` block (CP2), then the texts of
//! the instruction folders (CP5), then a table of the files that apply only to some paths
//! (CP6, CP7). Discovery keeps every file it looked at with its [`Fate`] and exact text, so
//! `build --format json` and `explain` can say why a file is in or out. Copilot's own
//! sentences (the table's introduction, the sentence before an attached file) are not in
//! this crate: [`Prose`] reads them from the installation (CP16).

pub mod explain;
pub mod frontmatter;
pub mod imports;
pub mod installation;
pub mod nearby;
pub mod profile;
pub mod prose;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::Serialize;

use ctxgraph_db::db::{Db, Host, Workspace, env_var};
use ctxgraph_db::files::{dir_listing_by_name, file_bytes, file_text, real_path};
use ctxgraph_db::path;
use ctxgraph_db::system::{EntryKind, FileKind};
use ctxgraph_db::tokens::TokenCounter;
use ctxgraph_db::worktree::worktree;

pub use frontmatter::FrontMatter;
pub use imports::{Import, Outcome};
pub use nearby::{CopilotRead, copilot_read};
pub use prose::{Prose, RECORDED_VERSION};

/// The file Copilot reads from the repository's and the working directory's `.github`.
pub const REPO_FILE: &str = "copilot-instructions.md";
/// The whole-file instruction names of one directory, in the order Copilot sends them.
pub const MODEL_NAMES: [&str; 3] = ["AGENTS.md", "CLAUDE.md", "GEMINI.md"];
/// CP13: the share of the prompt limit the system message and tool definitions may take.
pub const BUDGET_PERCENT: usize = 85;
/// CP13: the prompt limit of a BYOK model Copilot has no catalog data for.
pub const DEFAULT_MAX_PROMPT_TOKENS: usize = 64_000;
/// CP13: what Copilot's own system message and tool definitions took in the recorded runs
/// (4 719 + 5 698 tokens by its own count; they vary with tools, MCP servers and skills).
pub const MEASURED_OVERHEAD_TOKENS: usize = 10_417;

/// What a file is to Copilot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// `~/.copilot/copilot-instructions.md` (CP2).
    UserFile,
    /// `.github/copilot-instructions.md` (CP2).
    RepoFile,
    /// `AGENTS.md`, `CLAUDE.md`, `.claude/CLAUDE.md`, `GEMINI.md` (CP2).
    Model,
    /// An `*.instructions.md` file of an instruction folder (CP5).
    Instructions,
    /// A `.claude/rules` file (CP5).
    Rule,
}

/// Where a file sits, for Copilot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// `~/.copilot` (`$COPILOT_HOME`).
    Home,
    /// The git root (the working directory outside git, CP14).
    Root,
    /// The working directory, when below the root.
    Cwd,
    /// A directory between the working directory and the root (CP2).
    Between,
    /// Below the working directory: attached on reads (CP12).
    Nested,
}

/// Where a file's text goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// A `<custom_instruction>` block of the system message (CP2).
    Block,
    /// Bare text after the blocks (CP5).
    Text,
    /// A row of the table of conditional files (CP7): the text itself only on reads.
    TableRow,
    /// A `<system_reminder>` in the user message after a view's result (CP11, CP12).
    Read,
}

impl Placement {
    /// Where the agent puts this, in words.
    pub fn describe(self) -> &'static str {
        match self {
            Placement::Block => "system message, a <custom_instruction> block",
            Placement::Text => "system message, after the <custom_instruction> blocks",
            Placement::TableRow => "system message, a row of the table of conditional files",
            Placement::Read => "user message after the view's tool result",
        }
    }
}

/// What became of one file Copilot looked at.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "fate")]
pub enum Fate {
    /// Its text is sent.
    Sent,
    /// CP6: a table row only; its text is attached to views of matching files.
    Listed,
    /// CP4: a `<custom_instruction>` with the same text (imports expanded) was sent
    /// before it.
    Duplicate {
        /// The file sent first.
        of: PathBuf,
    },
    /// CP4: on a view, a link to a file attached before it (the same real path).
    SameFile {
        /// The file attached first.
        of: PathBuf,
    },
    /// CP6: `excludeAgent: coding-agent`.
    Excluded,
    /// Could not be read (not recorded against Copilot: left out).
    Unreadable {
        /// Why.
        reason: String,
    },
    /// CP12: conditional, and its patterns do not match the file viewed.
    NotMatched,
}

/// One file Copilot looked at, in the order its text goes.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct RuleFile {
    /// The path looked at.
    pub source: PathBuf,
    /// How Copilot names it in the table and on reads: from the root (or the working
    /// directory, for its own folders), or absolute in `~/.copilot`; a link by its target.
    pub named: String,
    /// What it is.
    pub kind: Kind,
    /// Where it sits.
    pub level: Level,
    /// Where its text goes.
    pub placement: Placement,
    /// The file's size in bytes.
    pub bytes: usize,
    /// The decoded text, imports expanded (what a read escapes and attaches).
    pub content: String,
    /// Exactly what the section carries for it: the whole block, the text, or the table row
    /// (empty when left out; for reads, the escaped content).
    pub text: String,
    /// CP6: its conditional patterns (empty: not conditional).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub patterns: Vec<String>,
    /// Whether and why it is sent.
    #[serde(flatten)]
    pub fate: Fate,
    /// CP9: every `@path` met while expanding it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub imports: Vec<Import>,
}

impl RuleFile {
    /// Whether its text (or row) is in the section or the read.
    pub fn is_sent(&self) -> bool {
        matches!(self.fate, Fate::Sent | Fate::Listed)
    }

    /// The rule [`RuleFile::reason`] gives for the fate: the fate's own, else the one that
    /// found the file.
    pub fn rule(&self) -> &'static str {
        let found = match (self.kind, self.level) {
            (_, Level::Nested) => "CP12",
            (Kind::Instructions | Kind::Rule, _) => "CP5",
            (Kind::UserFile | Kind::RepoFile | Kind::Model, _) => "CP2",
        };
        match &self.fate {
            Fate::Sent if self.placement == Placement::Read && !self.patterns.is_empty() => "CP11",
            Fate::Sent | Fate::Unreadable { .. } => found,
            Fate::Listed => "CP7",
            Fate::Duplicate { .. } | Fate::SameFile { .. } => "CP4",
            Fate::Excluded => "CP6",
            Fate::NotMatched => "CP11",
        }
    }

    /// Why the file is where it is, or left out, in words, with the rule behind it.
    pub fn reason(&self) -> String {
        let why_here = match (self.kind, self.level) {
            (Kind::UserFile, _) => "the user's copilot-instructions.md, first of all (CP2)",
            (Kind::RepoFile, Level::Root) => "the repository's .github/copilot-instructions.md (CP2)",
            (Kind::RepoFile, Level::Cwd) => "the working directory's .github/copilot-instructions.md (CP2)",
            (Kind::Model, Level::Root) => "a whole-file instruction at the git root (CP2)",
            (Kind::Model, Level::Cwd) => "a whole-file instruction in the working directory (CP2)",
            (Kind::RepoFile | Kind::Model, Level::Between) => {
                "a directory between the working directory and the root, nearest first (CP2)"
            }
            (_, Level::Nested) => {
                "a rule file between the viewed file and the working directory, nearest first (CP12)"
            }
            (Kind::Instructions | Kind::Rule, _) => "a file of an instruction folder, as text (CP5)",
            (Kind::RepoFile | Kind::Model, Level::Home) => "a file of ~/.copilot (CP2)",
        };
        match &self.fate {
            Fate::Sent if self.placement == Placement::Read && !self.patterns.is_empty() => {
                format!("its patterns ({}) match the file viewed (CP11)", self.patterns.join(", "))
            }
            Fate::Sent => {
                let inlined = self.imports.iter().filter(|i| i.outcome == Outcome::Inlined).count();
                if inlined == 0 {
                    why_here.to_owned()
                } else {
                    format!("{why_here}; {inlined} import(s) inlined (CP9)")
                }
            }
            Fate::Listed => format!(
                "applies to {} only: a table row, its text attached to views of matching files (CP6, CP7)",
                self.patterns.join(", ")
            ),
            Fate::Duplicate { of } => {
                format!("left out: the same text, imports expanded, was sent for {} (CP4)", of.display())
            }
            Fate::SameFile { of } => {
                format!("left out: the same file, through a link, is attached as {} (CP4)", of.display())
            }
            Fate::Excluded => "left out: its front matter excludes the coding agent (CP6)".to_owned(),
            Fate::Unreadable { reason } => format!("left out: cannot be read ({reason}) ({})", self.rule()),
            Fate::NotMatched => {
                format!("its patterns ({}) do not match the file viewed (CP11)", self.patterns.join(", "))
            }
        }
    }
}

/// A file with a rule-file name that Copilot does not read from this working directory.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct NotRead {
    /// The file.
    pub source: PathBuf,
    /// Why not, with the rule behind it.
    pub reason: &'static str,
}

/// Everything Copilot decides about its rule files for one working directory.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct CopilotContext {
    /// The working directory.
    pub cwd: PathBuf,
    /// The git root, if any.
    pub git_root: Option<PathBuf>,
    /// Where the repository's files are read: the git root, else the working directory (CP14).
    pub root: PathBuf,
    /// `$COPILOT_HOME`, else `~/.copilot`.
    pub copilot_home: PathBuf,
    /// Every file looked at, in section order: blocks, then texts and table rows.
    pub files: Vec<RuleFile>,
    /// Files with rule-file names that are not read from here (CP15).
    pub not_read: Vec<NotRead>,
}

/// One part of the section, for layouts.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Span {
    /// The file, or `None` for Copilot's own table introduction.
    pub source: Option<PathBuf>,
    /// Where it goes.
    pub placement: Placement,
    /// Its byte range in [`CopilotContext::section`].
    pub range: (usize, usize),
}

/// CP13: whether Copilot would send a request at all.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Budget {
    /// The section's tokens, by `counter`.
    pub section_tokens: usize,
    /// The counter's name.
    pub counter: &'static str,
    /// What Copilot's own prompt and tool definitions took in the recorded runs.
    pub overhead_tokens: usize,
    /// The share of the default prompt limit the two may take.
    pub limit_tokens: usize,
    /// Whether the estimate is over the limit: Copilot then sends nothing.
    pub refused: bool,
}

impl CopilotContext {
    /// The files whose text (or row) is in the section, in order.
    pub fn sent(&self) -> impl Iterator<Item = &RuleFile> {
        self.files.iter().filter(|f| f.is_sent())
    }

    /// CP1: the custom-instructions section, exactly: the blocks joined by a blank line;
    /// then the texts joined by a blank line, and the table (Copilot's introduction and
    /// header, then a row per conditional file), the two a blank line apart; with both
    /// blocks and the rest, a blank line between and a newline at the end.
    pub fn section(&self, prose: &Prose) -> String {
        self.layout(prose).0
    }

    /// [`CopilotContext::section`] and where each part of it came from.
    pub fn layout(&self, prose: &Prose) -> (String, Vec<Span>) {
        let mut spans = Vec::new();
        let mut out = String::new();
        let mut push = |out: &mut String, source: Option<&Path>, placement, text: &str| {
            let start = out.len();
            out.push_str(text);
            spans.push(Span { source: source.map(Path::to_path_buf), placement, range: (start, out.len()) });
        };
        let of = |placement| self.sent().filter(move |f| f.placement == placement);
        let blocks: Vec<&RuleFile> = of(Placement::Block).collect();
        let texts: Vec<&RuleFile> = of(Placement::Text).collect();
        let rows: Vec<&RuleFile> = of(Placement::TableRow).collect();
        for (i, block) in blocks.iter().enumerate() {
            if i > 0 {
                out.push_str("\n\n");
            }
            push(&mut out, Some(&block.source), Placement::Block, &block.text);
        }
        let rest = !texts.is_empty() || !rows.is_empty();
        if !blocks.is_empty() && rest {
            out.push_str("\n\n");
        }
        for (i, text) in texts.iter().enumerate() {
            if i > 0 {
                out.push_str("\n\n");
            }
            push(&mut out, Some(&text.source), Placement::Text, &text.text);
        }
        if !rows.is_empty() {
            if !texts.is_empty() {
                out.push_str("\n\n");
            }
            push(&mut out, None, Placement::TableRow, &prose.table_intro);
            for row in rows {
                out.push('\n');
                push(&mut out, Some(&row.source), Placement::TableRow, &row.text);
            }
        }
        if !blocks.is_empty() && rest {
            out.push('\n');
        }
        (out, spans)
    }

    /// CP13: whether the section takes Copilot past its budget (with the default prompt
    /// limit and the overhead measured in the recorded runs).
    pub fn budget(&self, prose: &Prose, counter: &dyn TokenCounter) -> Budget {
        let section_tokens = counter.count(&self.section(prose));
        let limit_tokens = DEFAULT_MAX_PROMPT_TOKENS * BUDGET_PERCENT / 100;
        Budget {
            section_tokens,
            counter: counter.name(),
            overhead_tokens: MEASURED_OVERHEAD_TOKENS,
            limit_tokens,
            refused: section_tokens + MEASURED_OVERHEAD_TOKENS > limit_tokens,
        }
    }
}

/// `$COPILOT_HOME`, else `~/.copilot`.
pub fn copilot_home(db: &dyn Db, host: Host) -> PathBuf {
    match env_var(db, host, "COPILOT_HOME".to_owned()) {
        Some(dir) if !dir.is_empty() => path::resolve(host.home(db), dir),
        _ => host.home(db).join(".copilot"),
    }
}

/// CP1–CP10, CP14, CP15: every file Copilot reads at start-up in `ws`, with its fate.
#[salsa::tracked(returns(ref))]
pub fn copilot_context(db: &dyn Db, ws: Workspace) -> CopilotContext {
    let cwd = ws.cwd(db).clone();
    let tree = worktree(db, ws);
    let git_root = tree.is_git().then(|| tree.root.clone());
    let root = git_root.clone().unwrap_or_else(|| cwd.clone());
    let home = copilot_home(db, ws.host(db));
    let below = cwd != root;
    let mut files = Vec::new();

    // CP2: the whole-file instructions, in Copilot's order.
    let push_named = |files: &mut Vec<RuleFile>, dir: &Path, name: &str, kind: Kind, level: Level| {
        if let Some(source) = find_name(db, dir, name) {
            files.push(whole_file(db, source, kind, level, &root, &home));
        }
    };
    push_named(&mut files, &home, REPO_FILE, Kind::UserFile, Level::Home);
    push_named(&mut files, &root.join(".github"), REPO_FILE, Kind::RepoFile, Level::Root);
    if below {
        push_named(&mut files, &cwd.join(".github"), REPO_FILE, Kind::RepoFile, Level::Cwd);
    }
    for name in MODEL_NAMES {
        push_named(&mut files, &root, name, Kind::Model, Level::Root);
    }
    if below {
        for name in MODEL_NAMES {
            push_named(&mut files, &cwd, name, Kind::Model, Level::Cwd);
        }
        for dir in between(&cwd, &root) {
            push_named(&mut files, &dir.join(".github"), REPO_FILE, Kind::RepoFile, Level::Between);
            push_named(&mut files, &dir, "AGENTS.md", Kind::Model, Level::Between);
            push_named(&mut files, &dir, "CLAUDE.md", Kind::Model, Level::Between);
            push_named(&mut files, &dir.join(".claude"), "CLAUDE.md", Kind::Model, Level::Between);
            push_named(&mut files, &dir, "GEMINI.md", Kind::Model, Level::Between);
        }
    }
    dedupe(&mut files);

    // CP5: the instruction folders.
    let mut folders = vec![(home.join("instructions"), Kind::Instructions, Level::Home, home.clone())];
    folders.push((root.join(".github").join("instructions"), Kind::Instructions, Level::Root, root.clone()));
    folders.push((root.join(".claude").join("rules"), Kind::Rule, Level::Root, root.clone()));
    if below {
        folders.push((cwd.join(".github").join("instructions"), Kind::Instructions, Level::Cwd, cwd.clone()));
        folders.push((cwd.join(".claude").join("rules"), Kind::Rule, Level::Cwd, cwd.clone()));
    }
    for (dir, kind, level, base) in folders {
        for source in walk_folder(db, &dir, kind) {
            let named = if level == Level::Home {
                path::display(&real_path(db, &source))
            } else {
                display_from(&base, &real_path(db, &source))
            };
            files.push(folder_file(db, source, named, kind, level));
        }
    }
    let not_read = not_read(db, &cwd, &root, git_root.is_some(), ws.host(db).home(db), &home);
    CopilotContext { cwd, git_root, root, copilot_home: home, files, not_read }
}

/// CP2: the directories strictly between `cwd` and `root`, nearest first.
pub fn between(cwd: &Path, root: &Path) -> Vec<PathBuf> {
    cwd.ancestors().skip(1).take_while(|d| *d != root && d.starts_with(root)).map(Path::to_path_buf).collect()
}

/// CP3: the file `name` in `dir`, matched without regard to case (the exact name first),
/// if it is a file (a link to one counts).
pub fn find_name(db: &dyn Db, dir: &Path, name: &str) -> Option<PathBuf> {
    let is_file = |path: &Path| db.files().get(db, path).kind(db) == FileKind::File;
    let exact = dir.join(name);
    if is_file(&exact) {
        return Some(exact);
    }
    // Which of several case variants wins has not been captured: by name, as before.
    let listing = dir_listing_by_name(db, db.files().get(db, dir));
    listing
        .iter()
        .filter(|e| e.name.as_str() != name && e.name.eq_ignore_ascii_case(name))
        .map(|e| dir.join(e.name.as_str()))
        .find(|p| is_file(p))
}

/// A whole-file instruction (CP2): the `<custom_instruction>` block, imports expanded in
/// the user's file (within `~/.copilot`), `AGENTS.md` and `CLAUDE.md` (within the root).
fn whole_file(db: &dyn Db, source: PathBuf, kind: Kind, level: Level, root: &Path, home: &Path) -> RuleFile {
    let named = display_from(root, &source);
    let mut file = RuleFile {
        named,
        kind,
        level,
        placement: Placement::Block,
        bytes: bytes_of(db, &source),
        content: String::new(),
        text: String::new(),
        patterns: Vec::new(),
        fate: Fate::Sent,
        imports: Vec::new(),
        source,
    };
    let raw = match read(db, &file.source) {
        Ok(raw) => raw,
        Err(reason) => {
            file.fate = Fate::Unreadable { reason };
            return file;
        }
    };
    let boundary = match kind {
        Kind::UserFile => Some(home),
        Kind::Model if imports_apply(&file.source) => Some(root),
        _ => None,
    };
    let expanded = match boundary {
        Some(boundary) => imports::expand(db, &file.source, &raw, boundary),
        None => imports::Expanded { text: raw.clone(), imports: Vec::new() },
    };
    file.text = format!("<custom_instruction>\n{}\n</custom_instruction>", expanded.text);
    file.content = expanded.text;
    file.imports = expanded.imports;
    file
}

/// CP9: the names whose `@paths` Copilot follows.
pub fn imports_apply(source: &Path) -> bool {
    source.file_name().is_some_and(|n| {
        let n = n.to_string_lossy();
        n.eq_ignore_ascii_case("AGENTS.md") || n.eq_ignore_ascii_case("CLAUDE.md")
    })
}

/// CP4: a `<custom_instruction>` whose text, imports expanded (CP9), equals an earlier
/// one's is left out: two equal `AGENTS.md` importing different files are both sent, and so
/// is a `GEMINI.md` (never expanded) equal to an `AGENTS.md` that imports something.
fn dedupe(files: &mut [RuleFile]) {
    let mut first: Vec<(String, PathBuf)> = Vec::new();
    for file in files.iter_mut() {
        if file.fate != Fate::Sent {
            continue;
        }
        if let Some((_, of)) = first.iter().find(|(text, _)| *text == file.content) {
            file.fate = Fate::Duplicate { of: of.clone() };
            file.text.clear();
        } else {
            first.push((file.content.clone(), file.source.clone()));
        }
    }
}

/// CP5: the files of one instruction folder, every directory's entries sorted by name;
/// hidden entries skipped; links to files followed (named by their target), links to
/// directories not. `*.instructions.md` (any case) in instruction folders, `*.md` in rules.
pub fn walk_folder(db: &dyn Db, dir: &Path, kind: Kind) -> Vec<PathBuf> {
    let suffix = if kind == Kind::Rule { ".md" } else { ".instructions.md" };
    let mut out = Vec::new();
    walk(db, dir, suffix, &mut out);
    out
}

fn walk(db: &dyn Db, dir: &Path, suffix: &str, out: &mut Vec<PathBuf>) {
    // Copilot sorts: `a, z, b, m, sub/` listed on tmpfs came as a, b, m, sub/s, z (CP5).
    let listing = dir_listing_by_name(db, db.files().get(db, dir));
    for entry in &listing {
        let name = entry.name.as_str();
        if name.starts_with('.') {
            continue;
        }
        let path = dir.join(name);
        let matches_suffix = name.len() > suffix.len()
            && name.get(name.len() - suffix.len()..).is_some_and(|end| end.eq_ignore_ascii_case(suffix));
        match entry.kind {
            EntryKind::Directory => walk(db, &path, suffix, out),
            EntryKind::File if matches_suffix => out.push(path),
            EntryKind::Symlink if matches_suffix && db.files().get(db, &path).kind(db) == FileKind::File => {
                out.push(path);
            }
            _ => {}
        }
    }
}

/// One file of an instruction folder (CP5, CP6): text, table row, or excluded.
fn folder_file(db: &dyn Db, source: PathBuf, named: String, kind: Kind, level: Level) -> RuleFile {
    let mut file = RuleFile {
        named,
        kind,
        level,
        placement: Placement::Text,
        bytes: bytes_of(db, &source),
        content: String::new(),
        text: String::new(),
        patterns: Vec::new(),
        fate: Fate::Sent,
        imports: Vec::new(),
        source,
    };
    let raw = match read(db, &file.source) {
        Ok(raw) => raw,
        Err(reason) => {
            file.fate = Fate::Unreadable { reason };
            return file;
        }
    };
    let fm = frontmatter::parse(&raw);
    if fm.excludes_coding_agent {
        file.fate = Fate::Excluded;
        file.content = raw;
        return file;
    }
    if fm.is_conditional() {
        file.placement = Placement::TableRow;
        file.fate = Fate::Listed;
        file.text = format!(
            "| {} | '{}' | {} |",
            fm.patterns.join(", ").replace('|', "\\|"),
            file.named,
            fm.description.replace('|', "\\|")
        );
        file.patterns = fm.patterns;
    } else {
        file.text.clone_from(&raw);
    }
    file.content = raw;
    file
}

/// CP8: a file's text as Copilot reads it: a BOM dropped, invalid UTF-8 replaced.
fn read(db: &dyn Db, source: &Path) -> Result<String, String> {
    let file = db.files().get(db, source);
    file_text(db, file).as_ref().map(|d| d.text.to_string()).map_err(ToString::to_string)
}

fn bytes_of(db: &dyn Db, source: &Path) -> usize {
    file_bytes(db, db.files().get(db, source)).as_ref().map_or(0, |b| b.len())
}

/// `path` relative to `base` when inside it, else absolute.
pub fn display_from(base: &Path, path: &Path) -> String {
    match path.strip_prefix(base) {
        Ok(rel) if !rel.as_os_str().is_empty() => path::display(rel),
        _ => path::display(path),
    }
}

/// CP15: files with a rule-file name that exist where Copilot does not look.
fn not_read(db: &dyn Db, cwd: &Path, root: &Path, git: bool, home: &Path, copilot: &Path) -> Vec<NotRead> {
    let mut out = Vec::new();
    let mut check = |path: PathBuf, reason: &'static str| {
        if db.files().get(db, &path).kind(db) == FileKind::File {
            out.push(NotRead { source: path, reason });
        }
    };
    let mut levels = vec![root.to_path_buf()];
    if cwd != root {
        levels.push(cwd.to_path_buf());
    }
    for dir in &levels {
        check(dir.join("CLAUDE.local.md"), "Copilot reads no CLAUDE.local.md (CP15)");
        check(
            dir.join(".claude").join("CLAUDE.md"),
            "Copilot reads .claude/CLAUDE.md only in the directories between the working directory and the root (CP2, CP15)",
        );
    }
    check(
        copilot.join("AGENTS.md"),
        "Copilot reads only copilot-instructions.md and instructions/ from ~/.copilot (CP15)",
    );
    check(home.join(".claude").join("CLAUDE.md"), "Copilot reads nothing from ~/.claude (CP15)");
    if git {
        for dir in root.ancestors().skip(1) {
            for name in MODEL_NAMES {
                check(dir.join(name), "above the git root: Copilot does not look there (CP15)");
            }
        }
    }
    out
}

/// CP11: the five characters Copilot escapes in an attached file's text.
pub fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// Paths already in the section (read files that are not attached again).
pub fn loaded(ctx: &CopilotContext) -> HashSet<&Path> {
    ctx.files.iter().map(|f| f.source.as_path()).collect()
}
