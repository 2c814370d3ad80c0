//! Command-line arguments. The names and flags here are a stable interface.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use ctxgraph_queries::opencode::prompt::ModelRef;

#[derive(Debug, Parser)]
#[command(
    name = "ctxgraph",
    version,
    about = "See, explain and pin the exact context your coding agent sends"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    Build(BuildArgs),
    Nearby(NearbyArgs),
    Config(ConfigArgs),
}

/// Print the merged opencode config, and where every value came from
///
/// The JSON is what `opencode debug config` prints for the keys config sources set.
/// Values that came in through `{env:…}` or `{file:…}` are shown as written unless
/// `--show-secrets` is given.
#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// The directory opencode would be started in [default: the current directory]
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,

    /// Output format: layers grouped by source for people, or the merged config as JSON
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

/// Print the system prompt opencode would send from a directory, byte for byte
///
/// The text runs from the environment block to the last instruction block, exactly as
/// opencode 1.18.33 joins them; no trailing newline is added. Environment variables, the
/// home directory and XDG directories come from this process, as they would for opencode.
#[derive(Debug, Args)]
pub struct BuildArgs {
    /// The directory opencode would be started in [default: the current directory]
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,

    /// Which part of the system text to print
    #[arg(long, value_enum, default_value_t = SectionArg::System)]
    pub section: SectionArg,

    /// Add the model line to the environment block, as opencode does for that model
    #[arg(long, value_name = "PROVIDER/ID")]
    pub model: Option<ModelRef>,

    /// Output format: the exact text, or the blocks with their sources and hashes
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    #[command(flatten)]
    pub remote: RemoteArgs,
}

/// How remote `instructions` URLs are fetched.
#[derive(Debug, Args)]
pub struct RemoteArgs {
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

/// Print the rules opencode's read tool would attach when the model reads FILE
///
/// Prints exactly the `<system-reminder>…</system-reminder>` text appended to the read
/// tool's result in a fresh session, or nothing when no rule would be attached.
#[derive(Debug, Args)]
pub struct NearbyArgs {
    /// The file being read (relative paths resolve against --cwd)
    pub file: PathBuf,

    /// The directory opencode would be started in [default: the current directory]
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum SectionArg {
    System,
    Environment,
    Instructions,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}
