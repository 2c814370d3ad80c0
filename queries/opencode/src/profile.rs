//! The opencode profile's answers in the shared shape ([`ctxgraph_db::profile`]): the system text
//! `build` prints (B2, I9 and the blocks around them), what the read tool attaches (N3), and
//! the fates and findings `explain` and `lint` already compute.

use std::path::Path;

use ctxgraph_db::agent::Agent;
use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::installation::InstallationState;
use ctxgraph_db::profile::{
    About, AgentFate, BlockView, Frame, LayoutBuilder, LeftOut, Part, Placement, Profile, ProfileError,
    ReadLayout, RemoteDocument, Request, Section, Setting, Source, SourceRef, Status, Waits, WordingSource,
};
use ctxgraph_db::tokens::{BytesPerFour, TokenCounter};

use super::explain::{self as opencode_explain, Reason, Source as ExplainSource, explain_target};
use super::lint::lint;
use super::message::{MessageOptions, system_message_layout};
use super::nearby::{Nearby, nearby_rules};
use super::prompt::{
    BlockKind, BuildError, ModelRef, PlacedBlock, Section as PromptSection, system_prompt_layout,
};
use super::session::reads::{RuleState, SessionNearby};
use ctxgraph_db::lint::{Budget, Finding};

/// opencode-ai 1.18.33.
pub struct Opencode;

fn would_not_start(err: &BuildError) -> ProfileError {
    ProfileError::Build(std::sync::Arc::new(err.clone()))
}

/// A reason a file is not in the prompt, as one word and the rule behind it.
fn reason_word(reason: &Reason) -> (&'static str, &'static str) {
    match reason {
        Reason::Missing => ("missing", "I7"),
        Reason::Directory => ("directory", "I7"),
        Reason::ShadowedGlobal { .. } => ("shadowed", "I3"),
        Reason::ShadowedByCategory { .. } => ("shadowed", "I4"),
        Reason::DisabledByFlag { .. } => ("disabled_by_flag", "P7"),
        Reason::ProjectConfigDisabled { .. } => ("project_config_disabled", "P7"),
        Reason::OutsideWorktree { .. } => ("outside_worktree", "P5"),
        Reason::OutsideWorkingDirectory { .. } => ("never_looked_at", "I4"),
        Reason::Empty => ("empty", "I9"),
        Reason::Unreadable { .. } => ("unreadable", "I7"),
        Reason::Duplicate { .. } => ("duplicate", "I6"),
        Reason::NoPatternMatched { .. } => ("no_pattern_matched", "I5"),
        Reason::NearbyOnly { .. } => ("on_read", "N3"),
        Reason::NearbyShadowed { .. } => ("shadowed_on_read", "N3"),
        Reason::WalkFailed { .. } => ("walk_failed", "F2"),
        Reason::Remote { .. } => ("not_fetched", "I8"),
    }
}

const ABOUT: About = About {
    agent: Agent::Opencode,
    title: "opencode",
    release: "opencode-1.18.33",
    doc: "docs/opencode/README.md",
    files: &[
        "AGENTS.md",
        "CLAUDE.md",
        "CONTEXT.md",
        "opencode.json",
        "opencode.jsonc",
        ".opencode/**",
        ".claude/skills/**/SKILL.md",
        ".agents/skills/**/SKILL.md",
    ],
};

impl Profile for Opencode {
    fn about(&self) -> &'static About {
        &ABOUT
    }

    fn session_costs(
        &self,
        db: &dyn Db,
        ws: Workspace,
        session: ctxgraph_db::files::File,
    ) -> Option<
        Result<ctxgraph_db::session_costs::SessionOccurrences, ctxgraph_db::session_costs::SessionFileError>,
    > {
        Some(session_costs(db, ws, session))
    }

    fn sections(&self) -> &'static [Section] {
        &[Section::Environment, Section::Instructions, Section::Message]
    }

    fn settings(&self) -> &'static [&'static str] {
        SETTINGS
    }

    /// opencode's whole explanation and its lint report its MCP servers (B4), skills (B5)
    /// and remote instructions: the whole message's inputs.
    fn explained_section(&self) -> Section {
        Section::Message
    }

    /// `explain` is [`crate::explain`]'s, every stage.
    fn explains_in_full(&self) -> bool {
        true
    }

    /// An export is loaded as a live session ([`crate::session`]).
    fn sessions_live(&self) -> bool {
        true
    }

    fn check_settings(&self, request: &Request) -> Result<(), ProfileError> {
        ctxgraph_db::profile::check_known_settings(self, request)?;
        message_options(request).map(|_| ())
    }

    /// C3: the config sources that are files, in merge order (an invalid flag gives none:
    /// the report says why).
    fn settings_files(&self, db: &dyn Db, ws: Workspace) -> Vec<ctxgraph_db::settings::SettingsFile> {
        let Ok(sources) = crate::config::config_sources(db, ws) else { return Vec::new() };
        sources
            .iter()
            .filter_map(|source| {
                Some(ctxgraph_db::settings::SettingsFile {
                    kind: source.kind.id(),
                    label: source.kind.label(),
                    path: source.path()?.to_path_buf(),
                    rule: source.kind.rule(),
                })
            })
            .collect()
    }

    fn settings_report(
        &self,
        db: &dyn Db,
        ws: Workspace,
    ) -> Result<ctxgraph_db::settings::SettingsReport, ProfileError> {
        let config = crate::config::merged_config(db, ws)
            .as_ref()
            .map_err(|err| would_not_start(&BuildError::Config(err.clone())))?;
        Ok(crate::config::report::settings_report(config, self.agent().name()))
    }

    fn fixes(&self, db: &dyn Db, ws: Workspace) -> Vec<(std::path::PathBuf, String)> {
        // Each reason's hint, and the `instructions` entry that would load the file.
        let Ok(explanation) = opencode_explain::explain(db, ws, &BytesPerFour) else { return Vec::new() };
        let mut fixes = Vec::new();
        for item in &explanation.items {
            let ExplainSource::File(path) = &item.source else { continue };
            let mut steps: Vec<String> = item.reasons.iter().filter_map(Reason::hint).collect();
            if let Some(entry) = &item.load_with {
                steps.push(format!(
                    "to load it anyway, add to opencode.json at the repository root: \"instructions\": [{entry:?}]"
                ));
            }
            if !steps.is_empty() {
                fixes.push((path.clone(), steps.join("; ")));
            }
        }
        fixes
    }

    fn waits_on(&self, section: Section) -> Waits {
        // The org config comes before any other (R1–R4); only the whole message holds the
        // MCP block (B4).
        Waits { remote_config: true, remote_documents: true, mcp: section == Section::Message }
    }

    /// B4: the configured `mcp` entries opencode connects to. A config that cannot be read
    /// names none here: the build that reads it says what is wrong and where.
    fn mcp_servers(&self, db: &dyn Db, ws: Workspace) -> Vec<(String, ctxgraph_db::mcp::McpRequest)> {
        let Ok(servers) = crate::mcp::mcp_servers(db, ws) else { return Vec::new() };
        servers
            .iter()
            .filter_map(|server| match &server.connect {
                crate::mcp::Connect::Yes(request) => Some((server.name.clone(), request.clone())),
                _ => None,
            })
            .collect()
    }

    fn texts_from_installation(&self, section: Section) -> bool {
        section == Section::Message
    }

    fn layout(
        &self,
        db: &dyn Db,
        ws: Workspace,
        request: &Request,
    ) -> Result<ctxgraph_db::profile::Layout, ProfileError> {
        let options = message_options(request)?;
        let model = options.model.clone();
        let section = match request.section {
            Section::Rules => PromptSection::System,
            Section::Environment => PromptSection::Environment,
            Section::Instructions => PromptSection::Instructions,
            Section::Message => PromptSection::Message,
            Section::Request => return Err(ProfileError::section_not_built(self, request.section)),
        };
        let prompt = if section == PromptSection::Message {
            system_message_layout(db, ws, options)
                .clone()
                .map_err(|err| ProfileError::Build(std::sync::Arc::new(err)))?
        } else {
            system_prompt_layout(db, ws, section, model).clone().map_err(|err| would_not_start(&err))?
        };
        // Files looked at when opencode starts; those a read attaches are the read's answer
        // (as for every agent), and finding them would walk the whole tree below.
        let explanation =
            opencode_explain::explain_startup(db, ws, &BytesPerFour).map_err(|e| would_not_start(&e))?;
        let mut builder = LayoutBuilder::new(prompt.text.clone());
        for placed in &prompt.blocks {
            let view = block_view(placed);
            builder.block(Part {
                source: view.source.to_source(),
                placement: view.placement,
                position: "system message: one of the system array's strings",
                text: &prompt.text[placed.range.clone()],
                status: view.status,
                rule: placed.rule,
                reason: format!("{} ({})", placed.reason, placed.rule),
                inlines: Vec::new(),
            });
        }
        let mut left_out = Vec::new();
        for item in explanation.items.iter().filter(|i| i.loaded.is_none()) {
            let ExplainSource::File(path) = &item.source else { continue };
            let Some(first) = item.reasons.first() else { continue };
            let (fate, rule) = reason_word(first);
            let reason = item.reasons.iter().map(Reason::describe).collect::<Vec<_>>().join("; ");
            left_out.push(LeftOut { source: path.clone(), fate, rule, reason });
        }
        let frame = Frame {
            cwd: explanation.cwd.clone(),
            root: explanation.git.then(|| explanation.worktree.clone()),
            left_out,
            settings: request
                .settings
                .iter()
                .filter_map(|(key, value)| {
                    let name = SETTINGS.iter().find(|known| **known == key)?;
                    Some(Setting { name, value: value.clone(), from: None })
                })
                .collect(),
            wording: wording(db, &prompt, section == PromptSection::Message),
        };
        let mut layout = frame.layout(self, builder);
        for (block, placed) in layout.blocks.iter_mut().zip(prompt.blocks.iter()) {
            block.unstable.clone_from(&placed.unstable_reason);
            block.placeholder.clone_from(&placed.unavailable_reason);
        }
        // F4: the matches of one `instructions` glob come in an order the disk decides.
        if let Ok(paths) = crate::instructions::system_paths(db, ws) {
            let listings = paths.listings();
            layout.mark_listed(|path| listings.get(path).cloned());
            // I8: every `instructions` URL, in config order, and what became of it.
            layout.remote = paths
                .remote
                .iter()
                .map(|entry| {
                    let state = db.remotes().get(db, &entry.url).state(db);
                    RemoteDocument::new(entry.shown.clone(), entry.source.name(), state)
                })
                .collect();
        }
        Ok(layout)
    }

    fn read(
        &self,
        db: &dyn Db,
        ws: Workspace,
        file: &Path,
        _: &Request,
    ) -> Option<Result<ReadLayout, ProfileError>> {
        let nearby = match nearby_rules(db, ws, file.to_path_buf()) {
            Ok(nearby) => nearby,
            Err(err) => return Some(Err(would_not_start(err))),
        };
        Some(Ok(read_layout(file, nearby, &SessionNearby::fresh(nearby))))
    }

    fn fate(&self, db: &dyn Db, ws: Workspace, counter: &dyn TokenCounter, file: &Path) -> AgentFate {
        opencode_fate(db, ws, counter, file)
    }

    fn lint(
        &self,
        db: &dyn Db,
        ws: Workspace,
        counter: &dyn TokenCounter,
        budget: Budget,
    ) -> Result<Vec<Finding>, ProfileError> {
        lint(db, ws, counter, budget).map_err(|e| would_not_start(&e))
    }
}

/// The `-c KEY=VALUE` settings opencode's layout takes: what its own command line and
/// request choose (`--model`, `--agent`, structured output, the user message's `system`).
const SETTINGS: &[&str] = &["model", "agent", "json-schema", "user-system"];

/// [`MessageOptions`] from a request's settings ([`SETTINGS`]).
fn message_options(request: &Request) -> Result<MessageOptions, ProfileError> {
    let mut options = MessageOptions::default();
    for (key, value) in &request.settings {
        match key.as_str() {
            "model" => {
                let model =
                    value.parse::<ModelRef>().map_err(|e| ProfileError::Setting(format!("model: {e}")))?;
                options.model = Some(model);
            }
            "agent" => options.agent.clone_from(value),
            "json-schema" => {
                options.json_schema = value.parse::<bool>().map_err(|_| {
                    ProfileError::Setting(format!("json-schema: expected true or false, got {value:?}"))
                })?;
            }
            "user-system" => options.user_system = Some(value.clone()),
            _ => {}
        }
    }
    Ok(options)
}

/// L3: where opencode's own texts in `prompt` came from: the installation, or why none could
/// be read. Only the whole message holds any (`whole_message`); the system prompt's sections
/// are the user's files and B2's fields. A text the installation has but this message cannot
/// use (no model chose a model prompt) is its block's `placeholder`, with why.
/// One block of opencode's memoized layout in the shape every agent's block has, borrowed:
/// what [`Opencode::layout`] converts, and what a host's turn reply carries of it.
pub fn block_view(placed: &PlacedBlock) -> BlockView<'_> {
    let source = match (placed.kind, &placed.source) {
        (BlockKind::Instruction, Some(path)) => SourceRef::File(Path::new(&**path)),
        (BlockKind::Remote, Some(url)) => SourceRef::Url(url),
        (_, _) => SourceRef::Agent(&placed.id),
    };
    BlockView {
        source,
        placement: Placement::SystemMessage,
        range: placed.range.clone(),
        hash: placed.hash,
        status: Status::Sent,
        rule: placed.rule,
        placeholder: placed.unavailable_reason.as_deref(),
        unstable: placed.unstable_reason.as_deref(),
        unordered: false,
    }
}

fn wording(db: &dyn Db, prompt: &super::prompt::Layout, whole_message: bool) -> WordingSource {
    match db.installation().state(db) {
        InstallationState::Found(texts) if whole_message => {
            WordingSource::Installation { path: texts.binary.clone(), version: texts.version.clone() }
        }
        InstallationState::Missing { reason } if whole_message => {
            WordingSource::Unavailable { reason: reason.clone() }
        }
        // Not asked for: the section holds no text of opencode's own.
        _ => match prompt.blocks.iter().find_map(|b| b.unavailable_reason.clone()) {
            Some(reason) => WordingSource::Unavailable { reason },
            None => WordingSource::None,
        },
    }
}

/// What opencode's read tool attaches for a read of `file`, in the shared shape: `read`
/// holds each rule file's state (fresh, or in a session: N2–N6), `nearby` the blocks the
/// walk found (N3), one per rule of `read` in the same order.
pub fn read_layout(file: &Path, nearby: &Nearby, read: &SessionNearby) -> ReadLayout {
    let mut builder = LayoutBuilder::new(read.reminder.clone().unwrap_or_default());
    let mut left_out = Vec::new();
    for (found, rule) in nearby.rules.iter().zip(&read.rules) {
        let (fate, rule_id, reason) = match (&rule.state, found.block.as_deref()) {
            (RuleState::Attached, Some(text)) => {
                builder.block(Part {
                    source: Source::File(rule.path.clone()),
                    placement: Placement::ToolResult,
                    position: "the read tool's result: a <system-reminder> after the file's lines",
                    text,
                    status: Status::Sent,
                    rule: "N3",
                    reason: "the nearest rule file of a directory between the file read and the working directory (N3)"
                        .to_owned(),
                    inlines: Vec::new(),
                });
                continue;
            }
            (RuleState::Attached | RuleState::Empty, _) => ("empty", "N3", "read as empty: no block (N3)".to_owned()),
            (RuleState::IsTarget, _) => ("is_target", "N3", "it is the file being read (N3)".to_owned()),
            (RuleState::InSystemPrompt, _) => {
                ("in_system_prompt", "N3", "already in the system prompt (N3)".to_owned())
            }
            (RuleState::LoadedNotShown, _) => (
                "loaded_not_shown",
                "N6",
                "an image or PDF read lists it as loaded and shows the model no reminder (N6)".to_owned(),
            ),
            (RuleState::ReadFails, _) => (
                "read_fails",
                "N6",
                "claimed, then the read fails (a binary file): nothing is shown, a later step attaches it (N6)"
                    .to_owned(),
            ),
            (RuleState::AlreadyLoaded { by_part }, _) => (
                "already_loaded",
                "N2",
                format!("already loaded by the completed read {by_part} in the session's history (N2)"),
            ),
            (RuleState::Claimed { by_part }, _) => (
                "claimed",
                "N4",
                format!("claimed by the read {by_part}, earlier in the same message (N4)"),
            ),
        };
        left_out.push(LeftOut { source: rule.path.clone(), fate, rule: rule_id, reason });
    }
    builder.read(Agent::Opencode, file, left_out, WordingSource::None)
}

/// opencode's verdict, read off `explain`'s items for the path.
pub fn opencode_fate(db: &dyn Db, ws: Workspace, counter: &dyn TokenCounter, path: &Path) -> AgentFate {
    let agent = "opencode";
    let cwd = ws.cwd(db).clone();
    let answer = match explain_target(db, ws, counter, &path.to_string_lossy(), &cwd) {
        Ok(answer) => answer,
        Err(err) => {
            return AgentFate {
                agent,
                status: Status::NotSent,
                placement: None,
                rule: "A1",
                reason: format!("opencode would not start: {err} (A1)"),
            };
        }
    };
    let items: Vec<_> =
        answer.items.iter().filter(|i| matches!(&i.source, ExplainSource::File(p) if p == path)).collect();
    if let Some(item) = items.iter().find(|i| i.loaded.is_some()) {
        let (rule, reason) = item
            .via
            .as_ref()
            .map_or_else(|| ("I7", "loaded (I7)".to_owned()), |via| (via.rule(), via.describe()));
        return AgentFate { agent, status: Status::Sent, placement: Some("system prompt"), rule, reason };
    }
    let all: Vec<&Reason> = items.iter().flat_map(|i| &i.reasons).collect();
    let on_read = all.iter().any(|r| matches!(r, Reason::NearbyOnly { .. }));
    // The rule of the reason that decides the status: the read tool's when it attaches the
    // file, else the first stage that left it out.
    let rule = match all.first() {
        _ if on_read => "N3",
        Some(first) => reason_word(first).1,
        None => "I2",
    };
    let reasons: Vec<String> = all.iter().map(|r| r.describe()).collect();
    AgentFate {
        agent,
        status: if on_read { Status::OnRead } else { Status::NotSent },
        placement: on_read.then_some("the read tool's result"),
        rule,
        reason: if reasons.is_empty() {
            "no stage of opencode's discovery looks at this path (I2)".to_owned()
        } else {
            reasons.join("; ")
        },
    }
}

/// `session rules` over an `opencode export` in `file` (docs/opencode/nearby.md,
/// "What each rule file costs over a session"). The export is loaded as a session input of its
/// own for the session stages (K10, N5) to read.
fn session_costs(
    db: &dyn Db,
    ws: Workspace,
    file: ctxgraph_db::files::File,
) -> Result<ctxgraph_db::session_costs::SessionOccurrences, ctxgraph_db::session_costs::SessionFileError> {
    use ctxgraph_db::session_costs::SessionFileError;
    let source_name = ctxgraph_db::path::display(file.path(db));
    let bytes = ctxgraph_db::files::file_bytes(db, file).as_ref().map_err(|e| SessionFileError {
        source_name: source_name.clone(),
        line: None,
        message: e.to_string(),
    })?;
    let export = super::session::export::parse_export(bytes).map_err(|e| SessionFileError {
        source_name: source_name.clone(),
        line: Some(e.line),
        message: format!("not an opencode session export: {} (column {}): {}", e.path, e.column, e.message),
    })?;
    let messages = export
        .messages
        .into_iter()
        .map(|m| super::session::Message::builder(m.info, m.parts).new(db))
        .collect();
    let session = super::session::Session::builder(export.info, messages).new(db);
    let mut notes = Vec::new();
    let system = match system_prompt_layout(db, ws, PromptSection::System, None) {
        Ok(prompt) => prompt
            .blocks
            .iter()
            .filter(|b| b.kind == BlockKind::Instruction)
            .filter_map(|b| Some((b.source.as_deref()?.into(), prompt.text[b.range.clone()].to_owned())))
            .collect(),
        Err(err) => {
            notes.push(format!("The system prompt's instruction files are left out: {err}"));
            Vec::new()
        }
    };
    Ok(super::session::costs::session_occurrences(db, session, ws.cwd(db), &system, notes))
}
