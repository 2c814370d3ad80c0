//! `ctxgraph report`: the engine's answers for every agent gathered into the page's data
//! ([`crate::report::model`]), rendered once ([`crate::report::html`]) and written whole.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use ctxgraph_db::Workspace;
use ctxgraph_db::agent::Agent;
use ctxgraph_db::profile::{AgentFate, Layout, Request, Section, Source, Status};
use ctxgraph_db::tokens::TokenCounter;
use ctxgraph_engine::PROFILES;
use ctxgraph_engine::{Engine, HostEnv, LimitOverrides, O200k};

use crate::args::{ReportArgs, SessionInput};
use crate::error::CliError;
use crate::output::{eprintln_styled, write_stdout};
use crate::report::model::{
    AgentBudget, BudgetBlock, Changes, Fate, Kind, LeftOutFile, Page, Place, RuleDir, RuleFile,
    SessionCostsPage, escaped, first_lines,
};

/// How much of a block the page shows on hover: enough to recognise it.
const FIRST_LINES: usize = 8;
const LINE_WIDTH: usize = 120;
/// The walk for rule files no agent sends at start (attached on read, or named so no
/// agent can list them) looks at no more entries than this, and no deeper.
const WALK_ENTRIES: usize = 20_000;
const WALK_DEPTH: usize = 12;
/// Directories the walk does not enter: git's own, and installed packages.
const WALK_SKIPS: [&str; 2] = [".git", "node_modules"];

/// The root the map's paths are relative to, and the home folder its other rows may be in.
struct Places<'a> {
    root: &'a Path,
    home: &'a Path,
}

impl Places<'_> {
    /// Whether `path` is the home folder's and not the project's.
    fn is_home(&self, path: &Path) -> bool {
        self.of(path) == Place::Home
    }

    fn of(&self, dir: &Path) -> Place {
        if dir.starts_with(self.root) {
            Place::Project
        } else if dir.starts_with(self.home) {
            Place::Home
        } else {
            Place::Outside
        }
    }
}

pub fn run(args: ReportArgs) -> Result<ExitCode, CliError> {
    let env = HostEnv::from_process();
    let agents: Vec<Agent> = match args.agent.one() {
        Some(agent) => vec![agent],
        None => PROFILES.iter().map(|profile| profile.agent()).collect(),
    };
    let policy = super::policy(&args.remote, &env);
    let (mut engine, ws) = super::open_with(env.clone(), args.cwd.clone())?;
    // A section built from an agent's own texts in its installation (opencode's whole
    // message) is what that agent's budget shows, when the installation is found; what
    // that section (else its rules) waits on outside the file system is loaded first.
    for &agent in &agents {
        let section = installation_section(agent);
        super::prepare_agent(&mut engine, ws, agent, section.unwrap_or(Section::Rules), &policy)?;
        if let Some(section) = section {
            engine.load_agent_installation(agent, section, args.message.opencode.as_deref(), &env.vars);
        }
    }
    let mut page = gather(&engine, ws, &agents, &args, &env)?;
    if let Some(record) = &args.session {
        // One agent named: its record's costs per step, as `session rules` reads them.
        if let Some(agent) = args.agent.one() {
            let absolute = super::session::absolute(record)?;
            let profile = ctxgraph_engine::profiles::profile(agent);
            page.session_costs = Some(SessionCostsPage {
                agent: agent.name(),
                title: profile.title(),
                record: ctxgraph_db::path::display(record),
                costs: engine.session_costs(ws, agent, &absolute)?,
            });
        }
        // A session the engine holds as messages (an `opencode export`): its timeline.
        if let Some(agent) = super::session::timeline_agent(args.agent.one()) {
            let input =
                SessionInput { session: record.clone(), cwd: args.cwd.clone(), remote: args.remote.clone() };
            let (mut engine, ws, session) = super::session::open(&input, agent)?;
            page.session =
                Some(engine.explain_session(ws, session, LimitOverrides::default(), None, None)?);
        }
    }
    if let Some(file) = &args.scenarios {
        page.changes = Some(changes(file)?);
    }
    let html = crate::report::html::render(&page);
    write(args.output.as_deref(), &html)
}

/// `check --format html`: the Changes section alone.
pub fn changes_page(project: &ctxgraph_check::Project, report: ctxgraph_check::CheckReport) -> String {
    let page = Page {
        cwd: ctxgraph_db::path::display(&project.repo),
        root: ctxgraph_db::path::display(&project.repo),
        tokenizer: O200k.name(),
        agents: Vec::new(),
        map: Vec::new(),
        session: None,
        session_costs: None,
        changes: Some(Changes { file: project.relative(&project.file), scenarios: report.scenarios }),
    };
    crate::report::html::render(&page)
}

fn changes(file: &Path) -> Result<Changes, CliError> {
    let project = ctxgraph_check::Project::load(file)?;
    // As in CI: a report writes no `.snap.new`.
    let report = project.check(&[], true)?;
    Ok(Changes { file: project.relative(&project.file), scenarios: report.scenarios })
}

fn write(output: Option<&Path>, html: &str) -> Result<ExitCode, CliError> {
    let Some(path) = output.filter(|path| *path != Path::new("-")) else {
        write_stdout(html.as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    };
    let path = page_path(path)?;
    ctxgraph_engine::atomic::write(&path, html.as_bytes(), ctxgraph_engine::atomic::Access::Umask)
        .map_err(|err| CliError::Output(std::io::Error::other(format!("{}: {err}", path.display()))))?;
    eprintln_styled(&format!("wrote {} ({} KB)", path.display(), html.len().div_ceil(1024)));
    Ok(ExitCode::SUCCESS)
}

/// Where `-o PATH` writes: `PATH/index.html` when PATH is an existing directory (as a web
/// server would serve it), else PATH. A PATH ending in `/` names a directory, so one that
/// does not exist is a usage error rather than a file of that name or a new directory.
fn page_path(path: &Path) -> Result<PathBuf, CliError> {
    if path.is_dir() {
        return Ok(path.join("index.html"));
    }
    let names_a_directory = path.as_os_str().as_encoded_bytes().ends_with(b"/");
    if names_a_directory {
        return Err(CliError::Usage(format!(
            "-o {}: no such directory; create it first, or give the page's file name",
            path.display()
        )));
    }
    Ok(path.to_path_buf())
}

/// The section of `agent` built from the texts of its installation, if it has one.
fn installation_section(agent: Agent) -> Option<Section> {
    let profile = ctxgraph_engine::profiles::profile(agent);
    profile.sections().iter().copied().find(|section| profile.texts_from_installation(*section))
}

fn gather(
    engine: &Engine,
    ws: Workspace,
    agents: &[Agent],
    args: &ReportArgs,
    env: &HostEnv,
) -> Result<Page, CliError> {
    let cwd = engine.cwd(ws).to_path_buf();
    let worktree = engine.worktree(ws);
    let root = if worktree.is_git() { worktree.root.clone() } else { cwd.clone() };
    let places = Places { root: &root, home: &env.home };
    let mut budgets = Vec::new();
    // Every rule file any agent sent, inlined or left out: the map's rows.
    let mut files: Vec<PathBuf> = Vec::new();
    for &agent in agents {
        let profile = ctxgraph_engine::profiles::profile(agent);
        let request = super::profiles::request(
            agent,
            Section::Rules,
            &[],
            &crate::args::InstallationArgs { path: None },
            env,
        )?;
        let layout = match engine.agent_layout(ws, agent, &request) {
            Ok(layout) => layout,
            Err(err) => {
                budgets.push(AgentBudget {
                    agent: agent.name(),
                    title: profile.title(),
                    release: profile.release(),
                    scope: String::new(),
                    bytes: 0,
                    tokens: 0,
                    framing_tokens: 0,
                    blocks: Vec::new(),
                    left_out: Vec::new(),
                    notes: Vec::new(),
                    error: Some(err.to_string()),
                    sends_nothing: false,
                });
                continue;
            }
        };
        for block in &layout.blocks {
            files.extend(block.source.path().map(Path::to_path_buf));
            files.extend(block.inlines.iter().cloned());
        }
        // A left-out path that is no file (an `@alice` mention read as an import, a missing
        // import) has no row on the map; the agent's own list still names it.
        files.extend(layout.left_out.iter().map(|left| left.source.clone()).filter(|path| path.is_file()));
        let mut budget = match installation_section(agent) {
            Some(section) => installed_budget(engine, ws, agent, section, &layout, &places, args),
            None => shared_budget(&layout, &places),
        };
        budget.title = profile.title();
        if layout.wording.is_unavailable() {
            budget.notes.push(format!(
                "{}'s own wording is unavailable: the text holds marked placeholders of its length",
                profile.title()
            ));
        }
        budget.notes.extend(layout.note.clone());
        budget.sends_nothing = layout.note.is_some();
        budget.left_out = layout
            .left_out
            .iter()
            .map(|left| LeftOutFile {
                file: relative(&root, &left.source),
                fate: left.fate,
                rule: left.rule,
                reason: left.reason.clone(),
            })
            .collect();
        let in_blocks: usize = budget.blocks.iter().map(|b| b.tokens).sum();
        budget.framing_tokens = budget.tokens.saturating_sub(in_blocks);
        budgets.push(budget);
    }
    files.sort();
    files.dedup();
    Ok(Page {
        cwd: ctxgraph_db::path::display(&cwd),
        root: ctxgraph_db::path::display(&root),
        tokenizer: O200k.name(),
        agents: budgets,
        map: map(engine, ws, agents, &places, &files),
        session: None,
        session_costs: None,
        changes: None,
    })
}

/// Any agent's layout, as `build --agent NAME --format json` lists it; files named
/// relative to `cwd`.
fn shared_budget(layout: &Layout, places: &Places<'_>) -> AgentBudget {
    let cwd = &layout.cwd;
    let blocks = layout
        .blocks
        .iter()
        .map(|block| {
            let text = layout.text_of(block);
            let (kind, label) = match &block.source {
                Source::File(path) => (Kind::RuleFile, relative(cwd, path)),
                Source::Url(url) => (Kind::Remote, url.clone()),
                Source::Agent(name) => (agent_text_kind(name), name.clone()),
            };
            let mut provenance = vec![block.position.to_owned()];
            provenance.push(with_rule(block.rule, &block.reason));
            provenance.extend(block.inlines.iter().map(|path| format!("inlines {}", relative(cwd, path))));
            provenance.extend(block.unstable.iter().map(|why| format!("unstable: {why}")));
            BudgetBlock {
                kind,
                label,
                source: block.source.display(),
                placement: block.placement.describe().to_owned(),
                start: block.range.start,
                end: block.range.end,
                bytes: block.range.len(),
                tokens: O200k.count(text),
                hash: block.hash.to_string(),
                status: status_word(block.status),
                rule: block.rule,
                reason: block.reason.clone(),
                provenance,
                first_lines: first_lines(text, FIRST_LINES, LINE_WIDTH),
                from_home: block.source.path().is_some_and(|path| places.is_home(path)),
            }
        })
        .collect();
    AgentBudget {
        agent: layout.agent,
        title: "",
        release: layout.release,
        scope: format!("what `build --agent {}` prints", layout.agent),
        bytes: layout.text.len(),
        tokens: O200k.count(&layout.text),
        framing_tokens: 0,
        blocks,
        left_out: Vec::new(),
        notes: Vec::new(),
        error: None,
        sends_nothing: false,
    }
}

/// The section built from `agent`'s installation (opencode's whole system message: its
/// model prompt, skills, references and MCP blocks around the system section) when the
/// installation's texts are there, else its rules text.
fn installed_budget(
    engine: &Engine,
    ws: Workspace,
    agent: Agent,
    section: Section,
    layout: &Layout,
    places: &Places<'_>,
    args: &ReportArgs,
) -> AgentBudget {
    let request = Request { section, settings: args.message.settings(None), wording: None };
    let whole = engine.agent_layout(ws, agent, &request).ok().filter(|whole| !whole.wording.is_unavailable());
    let Some(whole) = whole else {
        let mut budget = shared_budget(layout, places);
        budget.scope = format!(
            "what `build --agent {agent}` prints: without {}'s installation, not its `--section {}`",
            ctxgraph_engine::profiles::profile(agent).title(),
            section.name()
        );
        return budget;
    };
    let mut budget = shared_budget(&whole, places);
    budget.scope = format!("`build --agent {agent} --section {}`", section.name());
    budget.notes = whole
        .blocks
        .iter()
        .filter_map(|b| Some(format!("{} is a placeholder: {}", b.source.name(), b.placeholder.as_ref()?)))
        .collect();
    budget
}

/// The reason, with its rule in front unless it already names it.
fn with_rule(rule: &str, reason: &str) -> String {
    if reason.contains(rule) { reason.to_owned() } else { format!("{rule}: {reason}") }
}

/// A block of the agent's own text by its name: what it is for the legend.
fn agent_text_kind(name: &str) -> Kind {
    match name {
        "environment" => Kind::Environment,
        name if name.contains("skill") || name.contains("mcp") || name.contains("reference") => Kind::Tools,
        name if name.contains("memory") => Kind::Memory,
        name if name.contains("prompt") => Kind::Prompt,
        _ => Kind::AgentText,
    }
}

fn status_word(status: Status) -> &'static str {
    match status {
        Status::Sent => "sent",
        Status::Cut => "cut",
        Status::Inlined => "inlined",
        Status::OnRead => "on_read",
        Status::NotSent => "not_sent",
    }
}

/// The rule files by directory, each with every shown agent's fate (the engine's
/// `explain --agent all FILE`): every file an agent looked at from `cwd`, and the files
/// below the root that an agent attaches on a read, or that no agent can list.
fn map(
    engine: &Engine,
    ws: Workspace,
    agents: &[Agent],
    places: &Places<'_>,
    files: &[PathBuf],
) -> Vec<RuleDir> {
    let fixes_by_agent: BTreeMap<&str, BTreeMap<PathBuf, String>> =
        agents.iter().map(|&agent| (agent.name(), engine.agent_fixes(ws, agent))).collect();
    let fates_of = |path: &Path| {
        if agents.len() == PROFILES.len() {
            engine.file_fates(ws, path)
        } else {
            agents.iter().map(|&agent| engine.file_fate(ws, agent, path)).collect()
        }
    };
    let mut rows: Vec<(PathBuf, Vec<AgentFate>)> =
        files.iter().map(|path| (path.clone(), fates_of(path))).collect();
    for path in walk_markdown(places.root) {
        if files.contains(&path) {
            continue;
        }
        if path.file_name().and_then(|name| name.to_str()).is_none() {
            rows.push((path, agents.iter().map(|&agent| unlistable(agent)).collect()));
            continue;
        }
        let fates = fates_of(&path);
        if fates.iter().any(|fate| fate.status != Status::NotSent) {
            rows.push((path, fates));
        }
    }
    // Directories in the repository first, in path order; then those in the home folder,
    // then the rest, which sort by their absolute paths.
    let mut dirs: BTreeMap<(Place, String), Vec<RuleFile>> = BTreeMap::new();
    for (path, fates) in rows {
        let fates = fates
            .into_iter()
            .map(|fate| Fate {
                agent: fate.agent,
                status: status_word(fate.status),
                placement: fate.placement,
                rule: fate.rule,
                reason: fate.reason,
                fix: fixes_by_agent.get(fate.agent).and_then(|fixes| fixes.get(&path)).cloned(),
            })
            .collect();
        let parent = path.parent().unwrap_or(places.root);
        let dir = relative(places.root, parent);
        let name = path.file_name().map_or_else(String::new, escaped);
        let file = RuleFile { name, path: relative(places.root, &path), fates };
        dirs.entry((places.of(parent), dir)).or_default().push(file);
    }
    for files in dirs.values_mut() {
        files.sort_by(|a, b| a.name.cmp(&b.name));
    }
    dirs.into_iter().map(|((place, dir), files)| RuleDir { dir, place, files }).collect()
}

/// A file whose name is not UTF-8: no agent reads it. The JavaScript agents list it under
/// a name with U+FFFD in place of the bad bytes, which opens nothing; the others read
/// fixed UTF-8 names; ctxgraph's own listings leave it out.
fn unlistable(agent: Agent) -> AgentFate {
    AgentFate {
        agent: agent.name(),
        status: Status::NotSent,
        placement: None,
        // No agent's rule: the page's own verdict, which cites none.
        rule: "",
        reason: "its name is not UTF-8: no agent can open it by the name its listing gives".to_owned(),
    }
}

/// Every Markdown file below `root` (`.md`, any case), names that are not UTF-8 included,
/// in path order. Bounded: at most [`WALK_ENTRIES`] entries, [`WALK_DEPTH`] levels; links
/// are not followed, `.git` and `node_modules` not entered.
fn walk_markdown(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![(root.to_path_buf(), 0)];
    let mut seen = 0;
    while let Some((dir, depth)) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            seen += 1;
            if seen > WALK_ENTRIES {
                found.sort();
                return found;
            }
            let Ok(kind) = entry.file_type() else { continue };
            let name = entry.file_name();
            if kind.is_dir() && depth < WALK_DEPTH && !WALK_SKIPS.iter().any(|skip| name == *skip) {
                pending.push((entry.path(), depth + 1));
            } else if kind.is_file() && name.as_encoded_bytes().to_ascii_lowercase().ends_with(b".md") {
                found.push(entry.path());
            }
        }
    }
    found.sort();
    found
}

/// `path` relative to `root` where it is below it (`.` for the root), else whole; bytes
/// that are not UTF-8 written `\xNN`.
fn relative(root: &Path, path: &Path) -> String {
    match path.strip_prefix(root) {
        Ok(rest) if rest.as_os_str().is_empty() => ".".to_owned(),
        Ok(rest) => escaped(rest.as_os_str()),
        Err(_) => escaped(path.as_os_str()),
    }
}
