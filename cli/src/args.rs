//! Command-line arguments. The names and flags here are a stable interface.

// Doc comments here are `--help` text, where backticks would be printed as they are.
#![allow(clippy::doc_markdown)]

use std::path::PathBuf;

use clap::builder::TypedValueParser as _;
use clap::{Args, Parser, Subcommand, ValueEnum};
use ctxgraph_db::agent::Agent;

#[derive(Debug, Parser)]
#[command(
    name = "ctxgraph",
    version,
    about = "See, explain and pin the exact context your coding agent sends"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,

    /// When to colour output: `auto` follows NO_COLOR, CLICOLOR_FORCE, CLICOLOR and whether
    /// the stream is a terminal
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t = ColorWhen::Auto)]
    pub color: ColorWhen,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorWhen {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    Build(BuildArgs),
    Nearby(NearbyArgs),
    Explain(ExplainArgs),
    Lint(LintArgs),
    Snapshot(SnapshotArgs),
    Check(CheckArgs),
    InitCheck(InitCheckArgs),
    Watch(WatchArgs),
    Serve(ServeArgs),
    Config(ConfigArgs),
    Session(SessionArgs),
    Completions(CompletionsArgs),
    Memory(MemoryArgs),
    Mcp(McpArgs),
    Report(ReportArgs),
    Lsp(LspArgs),
    Hook(HookArgs),
}

impl Command {
    /// Whether the command was asked for JSON on stdout, where its errors then go too.
    pub fn json_output(&self) -> bool {
        match self {
            Command::Build(args) => args.format == Format::Json,
            Command::Nearby(args) => args.format == Format::Json,
            Command::Explain(args) => args.format == ExplainFormat::Json,
            Command::Lint(args) => args.format == LintFormat::Json,
            Command::Check(args) => args.format == CheckFormat::Json,
            Command::Watch(args) => args.format == Format::Json,
            Command::Config(args) => args.format == Format::Json,
            Command::Session(args) => args.json_output(),
            Command::Snapshot(_)
            | Command::InitCheck(_)
            | Command::Serve(_)
            | Command::Completions(_)
            | Command::Report(_) => false,
            Command::Memory(args) => args.json_output(),
            // stdout is the protocol's.
            Command::Mcp(_) | Command::Lsp(_) => false,
            // `hook run`'s stdout is the agent's; the others print snippets.
            Command::Hook(_) => false,
        }
    }
}

/// Print a shell completion script (e.g. `ctxgraph completions bash > /etc/bash_completion.d/ctxgraph`)
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    pub shell: clap_complete::Shell,
}

/// Print an agent's settings, every place they come from, and where every value came from
///
/// Every place the agent reads settings from, in the order a later one wins, with what each
/// holds (opencode: its whole merged config, which --format json's `config` gives as
/// `opencode debug config` prints it; another agent: the settings that shape its context).
/// --format json is `{agent, config, layers}`, the answer `serve`'s `config` and MCP's
/// `context_config` give. Values that came in through `{env:…}` or `{file:…}` are shown as
/// written unless `--show-secrets` is given.
#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// The directory the agent would be started in [default: the current directory]
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,

    /// Whose settings (every agent of the registry, [`agents_help`]).
    #[arg(long, value_parser = agent_parser(), default_value = "opencode", help = agents_help("Whose settings", ""))]
    pub agent: Agent,

    /// Output format: layers grouped by source for people, or the settings as JSON
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    /// Show values substituted from `{env:…}` and `{file:…}` instead of the tokens
    #[arg(long)]
    pub show_secrets: bool,

    /// Print one value (a dotted path such as `compaction.auto` or `instructions.0`), the
    /// source that set it and the values it overrode
    #[arg(long, value_name = "KEY.PATH")]
    pub explain: Option<String>,

    #[command(flatten)]
    pub remote: RemoteArgs,
}

/// Print the context a coding agent would send from a directory, byte for byte
///
/// Any agent of --agent: the exact contiguous text that carries its rule files, with its own
/// wrappers (opencode: the system prompt from the environment block to the last instruction
/// block, or with --section the whole first message; Codex: its AGENTS.md message; Claude
/// Code: its CLAUDE.md reminder; …). No trailing newline is added. Environment variables,
/// the home directory and XDG directories come from this process, as they would for the
/// agent. --format json lists every block (placement, source, byte range, hash, rule and
/// reason) and every file left out, in the same shape for every agent.
#[derive(Debug, Args)]
pub struct BuildArgs {
    #[command(flatten)]
    pub text: TextArgs,

    /// Output format: the exact text, or the blocks with their sources and hashes
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    #[command(flatten)]
    pub message: MessageArgs,

    #[command(flatten)]
    pub remote: RemoteArgs,
}

/// Which agent's text, started where, with which settings: what `build` and `watch` share.
#[derive(Debug, Args)]
pub struct TextArgs {
    /// The directory the agent would be started in [default: the current directory]
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,

    /// Whose context (every agent of the registry, [`agents_help`]).
    #[arg(long, value_parser = agent_parser(), default_value = "opencode", help = agents_help("Whose context", ""))]
    pub agent: Agent,

    /// A setting of that agent's own, as its `-c KEY=VALUE` takes it (each agent's, from the
    /// profile registry: [`settings_help`])
    #[arg(short = 'c', long = "agent-config", value_name = "KEY=VALUE", help = settings_help())]
    pub agent_config: Vec<String>,

    #[command(flatten)]
    pub installation: InstallationArgs,

    /// Which part of what the agent sends (each agent builds `rules`; the others are named
    /// per value)
    #[arg(long, value_enum, default_value_t = SectionArg::System)]
    pub section: SectionArg,

    /// Add the model line to the environment block, as opencode does for that model (its
    /// `-c model=PROVIDER/ID`)
    #[arg(long, value_name = "PROVIDER/ID")]
    pub model: Option<String>,
}

/// What the whole message (`--section message`) is built for.
#[derive(Clone, Debug, Args)]
pub struct MessageArgs {
    /// The opencode agent whose message to build (its prompt, its permissions; opencode's
    /// `-c agent=NAME`) [default: build]
    #[arg(long, value_name = "NAME")]
    pub opencode_agent: Option<String>,

    /// The opencode executable (or npm launcher) to load opencode's own texts from
    /// [default: $CTXGRAPH_OPENCODE, else `opencode` on PATH]
    #[arg(long, value_name = "PATH")]
    pub opencode: Option<PathBuf>,

    /// The user asked for structured output: add opencode's StructuredOutput line
    #[arg(long)]
    pub json_schema: bool,

    /// The user message's `system` text, appended last
    #[arg(long, value_name = "TEXT")]
    pub user_system: Option<String>,
}

impl MessageArgs {
    /// The flags as the opencode profile's `-c` settings (`model` from `--model`), for the
    /// one road every agent's build takes: another agent refuses them as it refuses any
    /// setting it does not model.
    pub fn settings(&self, model: Option<&str>) -> Vec<(String, String)> {
        ctxgraph_server::protocol::message_settings(
            model,
            self.opencode_agent.as_deref(),
            self.json_schema,
            self.user_system.as_deref(),
        )
    }
}

/// How remote `instructions` URLs are fetched, and whether MCP servers are asked.
#[derive(Clone, Debug, Args)]
pub struct RemoteArgs {
    /// Do not connect to the configured MCP servers: no MCP block (B4), and explain reports
    /// each server as not connected
    #[arg(long, env = "CTXGRAPH_NO_MCP", value_parser = clap::builder::FalseyValueParser::new())]
    pub no_mcp: bool,

    /// Use only cached copies of remote instructions; never touch the network
    #[arg(long, env = "CTXGRAPH_OFFLINE", value_parser = clap::builder::FalseyValueParser::new())]
    pub offline: bool,

    /// Fail (exit 2) when a remote instruction cannot be fetched, instead of dropping it or
    /// using an older cached copy
    #[arg(long)]
    pub strict: bool,

    /// Deadline for a remote document's response headers, retries included
    #[arg(long, value_name = "MS", default_value_t = 5000)]
    pub remote_timeout_ms: u64,

    /// Deadline for reading a remote document's body once headers arrived
    #[arg(long, value_name = "MS", default_value_t = 30_000)]
    pub remote_body_timeout_ms: u64,

    /// Largest remote document accepted
    #[arg(long, value_name = "BYTES", default_value_t = 1024 * 1024)]
    pub remote_max_bytes: u64,
}

/// Print what an agent attaches to its context when its model reads FILE
///
/// Prints exactly the text the agent adds for the read (opencode: the
/// `<system-reminder>…</system-reminder>` after the read tool's result; Claude Code: its
/// nested CLAUDE.md files and matching rules; Gemini CLI: newly found GEMINI.md files; …),
/// or nothing when it adds none. An agent that attaches nothing on reads (see --agent)
/// answers with nothing and exit 0; --format json says so in `note`. With
/// --session (opencode's export, Claude Code's transcript) the read happens in that session's
/// state: rules loaded by earlier reads (and, for opencode, claimed by reads in the same
/// message) are not attached again.
#[derive(Debug, Args)]
pub struct NearbyArgs {
    /// The file being read (relative paths resolve against --cwd)
    pub file: PathBuf,

    /// The directory the agent would be started in [default: the current directory]
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,

    /// The agent's record of a session (an `opencode export` JSON file, a Claude Code
    /// transcript): read FILE in that session's state, at its next step
    #[arg(long, value_name = "FILE")]
    pub session: Option<PathBuf>,

    /// With an opencode --session: read FILE inside this message (after its own reads) instead of at
    /// the next step
    #[arg(long, value_name = "ID", requires = "session")]
    pub message: Option<String>,

    /// text: exactly what is attached; json: every block and every rule file left out, in
    /// the shape every agent shares (opencode's adds the file's type, each rule's state and
    /// `loaded` under `opencode`)
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    /// Whose read to reproduce (every agent of the registry, [`agents_help`]).
    #[arg(long, value_parser = agent_parser(), default_value = "opencode", help = read_agents_help())]
    pub agent: Agent,

    #[command(flatten)]
    pub installation: InstallationArgs,

    #[command(flatten)]
    pub remote: RemoteArgs,
}

/// Write the snapshots of the scenarios in ctxgraph.toml (.ctxgraph/snapshots/NAME.snap)
///
/// Each scenario is built hermetically: only the repository exists, the home and global
/// config directories are the scenario's (or none), the date and platform are pinned and
/// absolute paths are written as `<repo>/…` and `<home>/…`.
#[derive(Debug, Args)]
pub struct SnapshotArgs {
    /// The scenarios to snapshot [default: all]
    pub names: Vec<String>,

    #[command(flatten)]
    pub scenarios: ScenariosArg,

    /// Propose a scenarios file instead, as `init-check` does
    #[arg(long, conflicts_with = "names")]
    pub init: bool,
}

/// Rebuild every scenario and compare it with its snapshot
///
/// Exit 0 when every prompt matches its snapshot, 1 with a diff, the token delta and the
/// sources that changed otherwise, 2 when the scenarios file or a scenario's config is
/// invalid. Outside CI a changed or new result is written as NAME.snap.new; in CI (`CI`
/// set and not false/0) nothing is written and a missing snapshot fails.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The scenarios to check [default: all]
    pub names: Vec<String>,

    #[command(flatten)]
    pub scenarios: ScenariosArg,

    /// Turn pending .snap.new files into snapshots instead of checking
    #[arg(long)]
    pub accept: bool,

    /// Output: for people, GitHub Actions annotations and step summary, or JSON
    #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
    pub format: CheckFormat,
}

/// Propose a scenarios file: the root, and every directory that holds a rule file
///
/// Writes ctxgraph.toml at the worktree root (or --scenarios PATH) when there is none;
/// prints the proposal otherwise.
#[derive(Debug, Args)]
pub struct InitCheckArgs {
    #[command(flatten)]
    pub scenarios: ScenariosArg,
}

#[derive(Debug, Args)]
pub struct ScenariosArg {
    /// The scenarios file [default: the nearest ctxgraph.toml up to the worktree root]
    #[arg(long, value_name = "PATH")]
    pub scenarios: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CheckFormat {
    Text,
    Github,
    Json,
    /// The report page's Changes section alone, one self-contained HTML file on stdout
    Html,
}

/// Rebuild an agent's context on every file change, one line per rebuild
///
/// Each line: the text's blake3 hash (first 16 hex digits), its size in bytes, the blocks
/// added, removed and changed since the previous build, and how many queries executed.
/// Only the directories the build looked at are watched. Any agent, section and settings
/// `build` takes.
#[derive(Debug, Args)]
pub struct WatchArgs {
    #[command(flatten)]
    pub text: TextArgs,

    #[command(flatten)]
    pub remote: RemoteArgs,

    /// Re-fetch remote instructions at most this often (opencode re-fetches on every step)
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    pub remote_refresh_secs: u64,

    /// text: one line per rebuild; json: one JSON object per rebuild (and per error), a line each
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// Serve builds to an agent host: JSON-RPC 2.0, one JSON object per line
///
/// Methods: build {cwd, section?, model?}, nearby {file, cwd}, installation {texts}, stats,
/// shutdown. See the README for the message shapes.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Talk over stdin and stdout (the only transport for now)
    #[arg(long, required = true)]
    pub stdio: bool,

    /// Do not watch files; re-check every known path before each request instead
    #[arg(long)]
    pub no_watch: bool,

    #[command(flatten)]
    pub remote: RemoteArgs,

    /// Re-fetch a directory's remote instructions at most this often (opencode re-fetches on
    /// every step; a warm server answers from the last fetch in between)
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    pub remote_refresh_secs: u64,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum SectionArg {
    /// The contiguous text that carries the rule files (opencode: its system prompt from the
    /// environment block to the last instruction block)
    #[value(name = "rules", alias = "system")]
    System,
    /// opencode: its environment block
    Environment,
    /// opencode: its instruction blocks
    Instructions,
    /// opencode: the whole system message, model or agent prompt … user.system
    Message,
    /// The whole first request, every block in send order (Claude Code, Codex)
    Request,
}

impl SectionArg {
    /// The section a profile builds.
    pub fn section(self) -> ctxgraph_db::profile::Section {
        use ctxgraph_db::profile::Section;
        match self {
            SectionArg::System => Section::Rules,
            SectionArg::Environment => Section::Environment,
            SectionArg::Instructions => Section::Instructions,
            SectionArg::Message => Section::Message,
            SectionArg::Request => Section::Request,
        }
    }
}

/// Where an agent's own wording (Claude Code's preamble and labels, Copilot's table
/// introduction and read sentence, Qwen Code's output-language file) is read from: it is
/// never copied into ctxgraph, and is shown as placeholders when no installation matches.
#[derive(Debug, Clone, Default, Args)]
pub struct InstallationArgs {
    /// The agent's installation to read its own wording from (Claude Code: its native
    /// binary, cli.js, package directory or `claude` launcher; Copilot: its `copilot`
    /// launcher, package directory, executable or runtime.node; Qwen Code: its package
    /// directory, a file in it or the `qwen` launcher) [default: the agent's $CTXGRAPH_…
    /// variable, else its command on PATH]
    #[arg(long = "agent-path", visible_aliases = ["claude-code", "copilot"], value_name = "PATH")]
    pub path: Option<PathBuf>,
}

/// `--agent`'s help: `what`, then every agent of the profile registry by its title, then
/// `tail`; read from the registry, so a new agent is named without an edit here.
fn agents_help(what: &str, tail: &str) -> String {
    let titles: Vec<&str> = ctxgraph_engine::PROFILES.iter().map(|p| p.title()).collect();
    match titles.split_last() {
        Some((last, rest)) => format!("{what}: {} or {last}{tail}", rest.join(", ")),
        None => format!("{what}{tail}"),
    }
}

/// `mcp`'s long help: the tools, read from the protocol table every surface is checked
/// against, so a new tool needs no edit here.
fn mcp_about() -> String {
    let tools: Vec<&str> = ctxgraph_server::protocol::METHODS.iter().filter_map(|m| m.tool).collect();
    format!(
        "Serve the workspace memory and the assembled context as Model Context Protocol tools over stdin/stdout: {}",
        tools.join(", ")
    )
}

/// `nearby --agent`'s help: every agent, and which of them attach nothing on reads, read
/// from the registry.
fn read_agents_help() -> String {
    let none: Vec<&str> =
        ctxgraph_engine::PROFILES.iter().filter(|p| !p.attaches_on_read()).map(|p| p.title()).collect();
    agents_help("Whose read to reproduce", &format!("; these attach nothing on reads: {}", none.join(", ")))
}

/// `-c`'s help: every agent of the profile registry that takes settings, with their keys;
/// read from the registry, so a profile's new setting is named without an edit here.
fn settings_help() -> String {
    let agents: Vec<String> = ctxgraph_engine::PROFILES
        .iter()
        .filter(|p| !p.settings().is_empty())
        .map(|p| format!("{}: {}", p.agent(), p.settings().join(", ")))
        .collect();
    format!("A setting of that agent's own, as its `-c KEY=VALUE` takes it ({})", agents.join("; "))
}

/// `--agent NAME`: any agent of the profile registry, by its name. The names come from
/// [`Agent::ALL`], so a new profile needs no edit here.
fn agent_parser() -> impl clap::builder::TypedValueParser<Value = Agent> {
    clap::builder::PossibleValuesParser::new(Agent::ALL.map(Agent::name))
        .try_map(|name| name.parse::<Agent>())
}

/// `--agent NAME|all`, where every agent at once makes sense too (`explain`, `lint`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AgentsArg(Option<Agent>);

impl AgentsArg {
    /// The one agent named, or `None` for `all`.
    pub fn one(self) -> Option<Agent> {
        self.0
    }
}

fn agents_parser() -> impl clap::builder::TypedValueParser<Value = AgentsArg> {
    clap::builder::PossibleValuesParser::new(Agent::ALL.map(Agent::name).into_iter().chain(["all"])).try_map(
        |name| {
            if name == "all" {
                Ok(AgentsArg(None))
            } else {
                name.parse::<Agent>().map(|a| AgentsArg(Some(a)))
            }
        },
    )
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// Explain why each rule file is, or is not, in an agent's context
///
/// Without TARGET: every rule file and URL the agent considered from the directory (opencode:
/// in prompt order, with its position, size and tokens when loaded and every reason when
/// not; another agent: each file it sends, inlines or leaves out, with its rule and reason).
/// With --agent all and a FILE: that file in every agent side by side.
/// TARGET can be a file (relative paths resolve from the current directory, then from
/// --cwd and each directory above it up to the repository root), a config `instructions`
/// entry, or a URL.
///
/// With --session: why each read in the session attached its nearby rules or not, and what
/// the next compaction summarises, keeps and prunes, each traced to its rule (N*, K*);
/// TARGET is then a file read at the next step. With --agent claude-code and its
/// transcript: why each rule-like file joined or left each request (CC40–CC46).
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// A file, an `instructions` entry, or a URL
    pub target: Option<String>,

    /// Whose reasons to give (every agent of the registry, or `all`).
    #[arg(
        long,
        value_parser = agents_parser(),
        default_value = "opencode",
        help = agents_help("Whose reasons to give", ", or (with a FILE) all of them side by side")
    )]
    pub agent: AgentsArg,

    /// The directory the agent would be started in [default: the current directory]
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,

    /// The agent's record of a session: an `opencode export` JSON file (`-` for stdin), or
    /// (with --agent claude-code) its transcript: explain that session
    #[arg(long, value_name = "FILE")]
    pub session: Option<PathBuf>,

    /// With an opencode --session: the session as it stood after this message, and its reads only
    #[arg(long, value_name = "ID", requires = "session")]
    pub message: Option<String>,

    /// With --session: model limits, as for `session compact`
    #[command(flatten)]
    pub limits: LimitArgs,

    /// Output format: prose, JSON, or the provenance graph in Graphviz DOT
    #[arg(long, value_enum, default_value_t = ExplainFormat::Text)]
    pub format: ExplainFormat,

    /// Also say which prompt opens the whole message for this opencode agent (B1/A2)
    #[arg(long, value_name = "NAME")]
    pub opencode_agent: Option<String>,

    /// With --opencode-agent: the model (its family picks opencode's model prompt)
    #[arg(long, value_name = "PROVIDER/ID")]
    pub model: Option<String>,

    /// The opencode executable to load opencode's own texts from
    #[arg(long, value_name = "PATH")]
    pub opencode: Option<PathBuf>,

    #[command(flatten)]
    pub remote: RemoteArgs,
}

/// Check the rules an agent would load for mistakes, secrets and size
///
/// Exits 1 when a finding is at or above the --deny level, 0 otherwise.
#[derive(Debug, Args)]
pub struct LintArgs {
    /// Whose rules to check (every agent of the registry, or `all`).
    #[arg(
        long,
        value_parser = agents_parser(),
        default_value = "opencode",
        help = agents_help("Whose rules to check", ", or all of them together with the cross-agent checks (CG012–CG015)")
    )]
    pub agent: AgentsArg,

    /// The directory the agent would be started in [default: the current directory]
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,

    /// Output format
    #[arg(long, value_enum, default_value_t = LintFormat::Text)]
    pub format: LintFormat,

    /// The lowest severity that makes the command fail
    #[arg(long, value_enum, default_value_t = DenyLevel::Errors)]
    pub deny: DenyLevel,

    /// Token budget for the whole system prompt (o200k_base tokens)
    #[arg(long, value_name = "TOKENS", default_value_t = ctxgraph_db::lint::Budget::default().total)]
    pub max_total_tokens: usize,

    /// Token budget for one rule file's block (o200k_base tokens)
    #[arg(long, value_name = "TOKENS", default_value_t = ctxgraph_db::lint::Budget::default().rule)]
    pub max_rule_tokens: usize,

    #[command(flatten)]
    pub remote: RemoteArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ExplainFormat {
    Text,
    Json,
    Dot,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LintFormat {
    Text,
    Json,
    Sarif,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DenyLevel {
    Errors,
    Warnings,
    Notes,
}

/// A recorded session: what opencode would do next (`opencode export <id>` JSON), and what
/// each rule file cost in any modelled agent's session (`session rules`)
#[derive(Debug, Args)]
pub struct SessionArgs {
    #[command(subcommand)]
    pub command: SessionCommand,
}

#[derive(Debug, Subcommand)]
pub enum SessionCommand {
    Compact(CompactArgs),
    Messages(MessagesArgs),
    Rules(RulesArgs),
}

impl SessionArgs {
    /// Whether the subcommand prints JSON, so its errors go to stdout as JSON too.
    pub fn json_output(&self) -> bool {
        match &self.command {
            SessionCommand::Compact(args) => args.format == Format::Json,
            SessionCommand::Messages(args) => args.format == Format::Json,
            SessionCommand::Rules(args) => args.format == Format::Json,
        }
    }
}

/// The compaction plan at the session's next step: usable window, overflow, the tail kept
/// verbatim, the head and the conversation sent to the summarizer, what pruning marks
///
/// Model limits come from the merged config (`provider.<p>.models.<m>.limit`, the model of
/// the session's last user message); --context/--input/--output override them.
#[derive(Debug, Args)]
pub struct CompactArgs {
    #[command(flatten)]
    pub session: SessionInput,

    #[command(flatten)]
    pub limits: LimitArgs,

    /// Summary instructions around the conversation (placeholders {conversation} and
    /// {previous_summary}) [default: ctxgraph's own template]
    #[arg(long, value_name = "FILE")]
    pub template: Option<PathBuf>,

    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// The `messages` opencode sends on the next normal step after the system message, as an
/// openai-compatible provider receives them
#[derive(Debug, Args)]
pub struct MessagesArgs {
    #[command(flatten)]
    pub session: SessionInput,

    #[arg(long, value_enum, default_value_t = Format::Json)]
    pub format: Format,
}

/// What each rule-like file cost over a recorded session, request by request: the bytes and
/// tokens of every rule file, CLAUDE.md/AGENTS.md, skill body or output style present in each
/// main-loop request (the history is re-sent every time), the totals, and what scoping a file
/// would have saved
///
/// --session is the agent's own record of the session (Claude Code: its transcript
/// `~/.claude/projects/<project>/<id>.jsonl`; opencode: `opencode export <id>`), read as it
/// is: what was sent is rebuilt from it, not simulated.
#[derive(Debug, Args)]
pub struct RulesArgs {
    /// Whose session it is (an agent whose sessions ctxgraph models; the others are refused)
    #[arg(long, value_parser = agent_parser(), help = agents_help("Whose session it is", ""))]
    pub agent: Agent,

    /// The agent's record of the session
    #[arg(long, value_name = "FILE")]
    pub session: PathBuf,

    /// The directory the agent was started in [default: the current directory]
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,

    /// text: a line per step and the totals; json: `steps[].files[]`, `total[]`, `savings[]`
    /// and `notes[]`
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct SessionInput {
    /// An `opencode export <id>` JSON file (`-` for stdin)
    #[arg(long, value_name = "EXPORT")]
    pub session: PathBuf,

    /// The directory opencode would be started in [default: the current directory]
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,

    #[command(flatten)]
    pub remote: RemoteArgs,
}

#[derive(Debug, Args)]
pub struct LimitArgs {
    /// The model's context window in tokens (overrides limit.context)
    #[arg(long, value_name = "N")]
    pub context: Option<u64>,
    /// The model's input limit in tokens (overrides limit.input)
    #[arg(long, value_name = "N")]
    pub input: Option<u64>,
    /// The model's output limit in tokens (overrides limit.output)
    #[arg(long, value_name = "N")]
    pub output: Option<u64>,
}

/// Serve the workspace memory and the assembled context as Model Context Protocol tools
/// over stdin/stdout
#[derive(Debug, Args)]
#[command(long_about = mcp_about())]
pub struct McpArgs {
    /// The workspace [default: the current directory]
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,

    /// The session the client's calls belong to (recorded with what it remembers or forgets)
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,

    #[command(flatten)]
    pub remote: RemoteArgs,

    /// Re-fetch remote instructions at most this often
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    pub remote_refresh_secs: u64,
}

/// A language server over stdin/stdout (diagnostics, code lenses, hovers, links) for an
/// editor: lint findings and config errors as you type, and what every agent attaches when
/// its model reads the open file (docs/editors.md)
#[derive(Debug, Args)]
pub struct LspArgs {
    /// Accepted for editors that pass it; stdio is the only transport
    #[arg(long)]
    pub stdio: bool,
}

/// Workspace memory: facts, the task handoff, tool statistics and session cards under
/// `<DIR>/.opencode/memory/`, recalled into the prompt when `memory.enabled` is true
#[derive(Debug, Args)]
pub struct MemoryArgs {
    /// The workspace [default: the current directory]
    #[arg(long, value_name = "DIR", global = true)]
    pub cwd: Option<PathBuf>,

    /// The session this change belongs to (recorded with it)
    #[arg(long, value_name = "ID", global = true)]
    pub session: Option<String>,

    #[command(subcommand)]
    pub command: MemoryCommand,
}

#[derive(Debug, Subcommand)]
pub enum MemoryCommand {
    /// Remember a fact (redacted; an identical active fact is not stored twice)
    Remember {
        text: String,
        #[arg(long, value_enum, default_value_t = ScopeArg::Project)]
        scope: ScopeArg,
        #[arg(long, default_value = "other")]
        category: String,
        /// Output format: what was stored and retired in words, or the store's answer as JSON
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Retire a fact, by id or by the text that best matches it
    Forget { target: String },
    /// Print what would be recalled for QUERY, with scores and what was cut
    Recall {
        query: String,
        /// The character budget (docs/memory.md §11: 9000)
        #[arg(long, value_name = "N")]
        budget: Option<usize>,
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Print every stored record
    Show {
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Replace or print the task handoff
    Handoff {
        #[command(subcommand)]
        action: HandoffAction,
    },
    /// Count a settled tool call
    ToolOutcome {
        tool: String,
        #[arg(value_enum)]
        outcome: OutcomeArg,
        /// Error kind (timeout, not_found, permission, invalid_args, other); default:
        /// classified from --message
        #[arg(long)]
        kind: Option<String>,
        #[arg(long)]
        message: Option<String>,
    },
    /// Ask the extraction model (`memory_model`, else `small_model`, through its provider's
    /// OpenAI-compatible `options.baseURL`) what a settled tool call teaches, and store its
    /// 0–2 observations; evidence seen before is never sent again
    Observe {
        tool: String,
        #[arg(value_enum)]
        outcome: OutcomeArg,
        /// What the call was given (its command line or arguments)
        #[arg(long, default_value = "")]
        input: String,
        /// A file holding what the call printed, or its error (`-` for stdin)
        #[arg(long, value_name = "FILE")]
        output: PathBuf,
        /// The model's OpenAI-compatible base URL [default: the provider's options.baseURL]
        #[arg(long, value_name = "URL")]
        base_url: Option<String>,
    },
    /// Add a card for an archived session
    SessionCard {
        #[command(subcommand)]
        action: SessionCardAction,
    },
}

impl MemoryArgs {
    /// Whether the subcommand prints JSON, so its errors go to stdout as JSON too.
    pub fn json_output(&self) -> bool {
        match &self.command {
            MemoryCommand::Remember { format, .. }
            | MemoryCommand::Recall { format, .. }
            | MemoryCommand::Show { format, .. } => *format == Format::Json,
            _ => false,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum HandoffAction {
    /// Replace the handoff with the JSON object in FILE (`-` for stdin)
    Set {
        file: PathBuf,
    },
    Show,
}

#[derive(Debug, Subcommand)]
pub enum SessionCardAction {
    /// Build the card from an `opencode export` JSON file
    Add {
        #[arg(long, value_name = "FILE")]
        from_export: PathBuf,
    },
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ScopeArg {
    User,
    Project,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum OutcomeArg {
    Ok,
    Error,
}

/// Write one self-contained HTML page of what every agent sends from a directory
///
/// Budget: each agent's context block by block, in o200k_base tokens. Map: every rule file
/// any agent looked at, and what each agent does with it and why. With --session: what each
/// rule-like file cost per request of the agent's recorded session, and for opencode what a
/// compaction now would summarise, keep and prune, and what each read attached. With
/// --scenarios: each scenario's prompt diff against its snapshot. The page requests
/// nothing (its Content-Security-Policy forbids it) and its tables read without script.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The directory the agents would be started in [default: the current directory]
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,

    /// Whose context to show: every agent's side by side, or one
    #[arg(long, value_parser = agents_parser(), default_value = "all")]
    pub agent: AgentsArg,

    /// A recorded session. With one --agent, that agent's own record (Claude Code's
    /// transcript, Codex's rollout, an `opencode export`): add what each rule-like file cost
    /// per request, as `session rules` reads it. With opencode or every agent, an `opencode
    /// export` JSON file (`-` for stdin): add its timeline, under the model limits of the config
    #[arg(long, value_name = "RECORD")]
    pub session: Option<PathBuf>,

    /// A scenarios file (ctxgraph.toml): add each scenario's diff against its snapshot
    /// (nothing is written, as `check` in CI)
    #[arg(long, value_name = "FILE")]
    pub scenarios: Option<PathBuf>,

    /// Where to write the page (written whole or not at all) [default: stdout]; an
    /// existing directory gets `index.html` inside it
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// opencode's whole system message (model prompt, skills, MCP) when its installation
    /// is found, else its system section
    #[command(flatten)]
    pub message: MessageArgs,

    #[command(flatten)]
    pub remote: RemoteArgs,
}

/// The hook entry that makes an agent check its own rule files as it edits them
///
/// Prints the entry for the agent's settings file (Claude Code: `.claude/settings.json`, a
/// PostToolUse hook on Write, Edit and MultiEdit; Gemini CLI: `.gemini/settings.json`,
/// AfterTool; Qwen Code: `.qwen/settings.json`, PostToolUse), or with --install merges it into that
/// file, keeping every other key and hook there (running it twice changes nothing). The
/// hook runs `ctxgraph hook run`, which lints the file the tool call wrote when it is one of
/// the agent's rule files and answers in the agent's hook format. docs/hooks.md lists what
/// the other agents offer.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct HookArgs {
    #[command(subcommand)]
    pub command: Option<HookCommand>,

    /// The agent whose hook to print or install: claude-code, gemini or qwen-code (docs/hooks.md)
    #[arg(long, value_parser = agent_parser(), default_value = "claude-code")]
    pub agent: Agent,

    /// Merge the entry into the agent's project settings file under --cwd
    #[arg(long)]
    pub install: bool,

    /// The project directory whose settings --install writes [default: the current directory]
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum HookCommand {
    Run(HookRunArgs),
    FilesRegex(FilesRegexArgs),
}

/// What the agent runs after a tool call: reads the agent's hook input on stdin and, when
/// the call wrote one of the agent's rule files, answers with that file's lint findings in
/// the agent's format (Claude Code: `{"decision":"block","reason":…}`; Gemini CLI and Qwen
/// Code: the findings as `additionalContext`); nothing otherwise
#[derive(Debug, Args)]
pub struct HookRunArgs {
    /// The agent that runs the hook
    #[arg(long, value_parser = agent_parser(), default_value = "claude-code")]
    pub agent: Agent,

    /// The lowest severity that is reported back to the agent
    #[arg(long, value_enum, default_value_t = DenyLevel::Warnings)]
    pub deny: DenyLevel,
}

/// Print one regular expression (Python's `re` and Rust's `regex` read it alike) matching
/// the repository paths of the files the agents read, from each profile's list: what
/// .pre-commit-hooks.yaml's `files:` holds
#[derive(Debug, Args)]
pub struct FilesRegexArgs {
    /// Whose files: one agent's, or every agent's
    #[arg(long, value_parser = agents_parser(), default_value = "all")]
    pub agent: AgentsArg,

    /// Also `ctxgraph check`'s own inputs: ctxgraph.toml and the snapshots in .ctxgraph/
    #[arg(long)]
    pub with_scenarios: bool,
}
