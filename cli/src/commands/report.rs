//! `ctxgraph report`: the engine's answers for every agent gathered into the page's data
//! ([`crate::report::model`]), rendered once ([`crate::report::html`]) and written whole.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use ctxgraph_db::Workspace;
use ctxgraph_db::agent::Agent;
use ctxgraph_db::installation::InstallationState;
use ctxgraph_db::profile::{Layout, Source, Status};
use ctxgraph_db::tokens::TokenCounter;
use ctxgraph_engine::profiles::PROFILES;
use ctxgraph_engine::{BlockKind, Engine, HostEnv, LimitOverrides, O200k, PlacedBlock, Section};

use crate::args::{ReportArgs, SessionInput};
use crate::error::CliError;
use crate::output::{eprintln_styled, write_stdout};
use crate::report::model::{
    AgentBudget, BudgetBlock, Changes, Fate, Kind, LeftOutFile, Page, RuleDir, RuleFile, first_lines,
};

/// How much of a block the page shows on hover: enough to recognise it.
const FIRST_LINES: usize = 8;
const LINE_WIDTH: usize = 120;

pub fn run(args: ReportArgs) -> Result<ExitCode, CliError> {
    let env = HostEnv::from_process();
    let agents: Vec<Agent> = match args.agent.one() {
        Some(agent) => vec![agent],
        None => PROFILES.iter().map(|profile| profile.agent()).collect(),
    };
    let (mut engine, ws) = super::open_fetching(args.cwd.clone(), &args.remote)?;
    // opencode's own texts (its model prompt…) come from its installation, when found.
    let installed = agents.contains(&Agent::Opencode) && {
        let locate = match &args.message.opencode {
            Some(path) => ctxgraph_engine::installation::Locate::Flag(path.clone()),
            None => ctxgraph_engine::installation::Locate::from_process(),
        };
        matches!(engine.load_installation(&locate), InstallationState::Found(_))
    };
    let mut page = gather(&engine, ws, &agents, &args, &env, installed)?;
    if let Some(export) = &args.session {
        let input =
            SessionInput { session: export.clone(), cwd: args.cwd.clone(), remote: args.remote.clone() };
        let (mut engine, ws, session) = super::session::open(&input)?;
        page.session = Some(engine.explain_session(ws, session, LimitOverrides::default(), None, None)?);
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
    match output {
        None => write_stdout(html.as_bytes())?,
        Some(path) if path == Path::new("-") => write_stdout(html.as_bytes())?,
        Some(path) => {
            ctxgraph_engine::atomic::write(path, html.as_bytes(), ctxgraph_engine::atomic::Access::Umask)
                .map_err(|err| {
                    CliError::Output(std::io::Error::other(format!("{}: {err}", path.display())))
                })?;
            eprintln_styled(&format!("wrote {} ({} KB)", path.display(), html.len().div_ceil(1024)));
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn gather(
    engine: &Engine,
    ws: Workspace,
    agents: &[Agent],
    args: &ReportArgs,
    env: &HostEnv,
    installed: bool,
) -> Result<Page, CliError> {
    let cwd = engine.cwd(ws).to_path_buf();
    let worktree = engine.worktree(ws);
    let root = if worktree.is_git() { worktree.root.clone() } else { cwd.clone() };
    let mut budgets = Vec::new();
    // Every rule file any agent sent, inlined or left out: the map's rows.
    let mut files: Vec<PathBuf> = Vec::new();
    for &agent in agents {
        let profile = ctxgraph_engine::profiles::profile(agent);
        let request =
            super::profiles::request(agent, &[], &crate::args::InstallationArgs { path: None }, env)?;
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
                });
                continue;
            }
        };
        for block in &layout.blocks {
            files.extend(block.source.path().map(Path::to_path_buf));
            files.extend(block.inlines.iter().cloned());
        }
        files.extend(layout.left_out.iter().map(|left| left.source.clone()));
        let mut budget = if agent == Agent::Opencode {
            opencode_budget(engine, ws, &layout, &cwd, args, installed)
        } else {
            shared_budget(&layout, &cwd)
        };
        budget.title = profile.title();
        if layout.wording.is_unavailable() {
            budget.notes.push(format!(
                "{}'s own wording is unavailable: the text holds marked placeholders of its length",
                profile.title()
            ));
        }
        budget.notes.extend(layout.note.clone());
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
        map: map(engine, ws, agents, &root, &files),
        session: None,
        changes: None,
    })
}

/// Any agent's layout, as `build --agent NAME --format json` lists it; files named
/// relative to `cwd`.
fn shared_budget(layout: &Layout, cwd: &Path) -> AgentBudget {
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
            }
        })
        .collect();
    AgentBudget {
        agent: layout.agent,
        title: "",
        release: layout.release,
        scope: "what `build --agent NAME` prints".to_owned(),
        bytes: layout.text.len(),
        tokens: O200k.count(&layout.text),
        framing_tokens: 0,
        blocks,
        left_out: Vec::new(),
        notes: Vec::new(),
        error: None,
    }
}

/// opencode's whole system message when its installation is loaded (its model prompt,
/// skills, references and MCP blocks around the system section), else its system section.
fn opencode_budget(
    engine: &Engine,
    ws: Workspace,
    layout: &Layout,
    cwd: &Path,
    args: &ReportArgs,
    installed: bool,
) -> AgentBudget {
    let message = installed
        .then(|| engine.layout(ws, Section::Message, super::message_options(None, &args.message)))
        .and_then(Result::ok);
    let Some(message) = message else {
        let mut budget = shared_budget(layout, cwd);
        "the system section (`build`): without opencode's installation, no model prompt, skills or MCP"
            .clone_into(&mut budget.scope);
        return budget;
    };
    let blocks = message.blocks.iter().map(|placed| placed_block(&message.text, placed, cwd)).collect();
    AgentBudget {
        agent: layout.agent,
        title: "",
        release: layout.release,
        scope: "the whole system message (`build --section message`)".to_owned(),
        bytes: message.text.len(),
        tokens: O200k.count(&message.text),
        framing_tokens: 0,
        blocks,
        left_out: Vec::new(),
        notes: message
            .blocks
            .iter()
            .filter_map(|b| {
                b.unavailable_reason.as_ref().map(|why| format!("{} is a placeholder: {why}", b.id))
            })
            .collect(),
        error: None,
    }
}

fn placed_block(text: &str, placed: &PlacedBlock, cwd: &Path) -> BudgetBlock {
    let body = &text[placed.range.clone()];
    let kind = match placed.kind {
        BlockKind::Environment => Kind::Environment,
        BlockKind::Instruction => Kind::RuleFile,
        BlockKind::Remote => Kind::Remote,
        BlockKind::Memory => Kind::Memory,
        BlockKind::ModelPrompt | BlockKind::AgentPrompt => Kind::Prompt,
        BlockKind::References | BlockKind::Mcp | BlockKind::Skills => Kind::Tools,
        BlockKind::StructuredOutput | BlockKind::UserSystem => Kind::AgentText,
    };
    let label = match (&placed.source, placed.kind) {
        (Some(path), BlockKind::Instruction) => relative(cwd, Path::new(&**path)),
        (Some(source), _) => source.to_string(),
        (None, _) => placed.id.to_string(),
    };
    let mut provenance = vec!["system message: one of the system array's strings".to_owned()];
    provenance.push(with_rule(placed.rule, &placed.reason));
    provenance.extend(placed.unstable_reason.iter().map(|why| format!("unstable: {why}")));
    BudgetBlock {
        kind,
        label,
        source: placed.source.as_deref().map_or_else(|| format!("({})", placed.id), str::to_owned),
        placement: "system message".to_owned(),
        start: placed.range.start,
        end: placed.range.end,
        bytes: placed.range.len(),
        tokens: O200k.count(body),
        hash: placed.hash.to_string(),
        status: "sent",
        rule: placed.rule,
        reason: placed.reason.to_string(),
        provenance,
        first_lines: first_lines(body, FIRST_LINES, LINE_WIDTH),
    }
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
/// `explain --agent all FILE`).
fn map(engine: &Engine, ws: Workspace, agents: &[Agent], root: &Path, files: &[PathBuf]) -> Vec<RuleDir> {
    let hints = if agents.contains(&Agent::Opencode) { opencode_fixes(engine, ws) } else { BTreeMap::new() };
    // Directories in the repository first, in path order; then those outside it (a home
    // directory's rule files), which sort by their absolute paths.
    let mut dirs: BTreeMap<(bool, String), Vec<RuleFile>> = BTreeMap::new();
    for path in files {
        let fates = if agents.len() == PROFILES.len() {
            engine.file_fates(ws, path)
        } else {
            agents.iter().map(|&agent| engine.file_fate(ws, agent, path)).collect()
        };
        let fates = fates
            .into_iter()
            .map(|fate| Fate {
                agent: fate.agent,
                status: status_word(fate.status),
                placement: fate.placement,
                rule: fate.rule,
                reason: fate.reason,
                fix: if fate.agent == Agent::Opencode.name() { hints.get(path).cloned() } else { None },
            })
            .collect();
        let outside = !path.starts_with(root);
        let dir = path.parent().map_or_else(|| ".".to_owned(), |dir| relative(root, dir));
        let name = path.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        dirs.entry((outside, dir)).or_default().push(RuleFile { name, path: relative(root, path), fates });
    }
    dirs.into_iter().map(|((_, dir), files)| RuleDir { dir, files }).collect()
}

/// What `explain` tells to do about each rule file opencode leaves out: its reasons'
/// hints, and the `instructions` entry that would load it.
fn opencode_fixes(engine: &Engine, ws: Workspace) -> BTreeMap<PathBuf, String> {
    use ctxgraph_engine::answers::explain::Source as ExplainSource;
    let Ok(explanation) = engine.explain(ws) else { return BTreeMap::new() };
    let mut fixes = BTreeMap::new();
    for item in &explanation.items {
        let ExplainSource::File(path) = &item.source else { continue };
        let mut steps: Vec<String> =
            item.reasons.iter().filter_map(ctxgraph_engine::answers::explain::Reason::hint).collect();
        if let Some(entry) = &item.load_with {
            steps.push(format!("to load it anyway, add to opencode.json at the repository root: \"instructions\": [{entry:?}]"));
        }
        if !steps.is_empty() {
            fixes.insert(path.clone(), steps.join("; "));
        }
    }
    fixes
}

/// `path` relative to `root` where it is below it (`.` for the root), else as printed.
fn relative(root: &Path, path: &Path) -> String {
    match path.strip_prefix(root) {
        Ok(rest) if rest.as_os_str().is_empty() => ".".to_owned(),
        Ok(rest) => rest.to_string_lossy().into_owned(),
        Err(_) => ctxgraph_db::path::display(path),
    }
}
