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
    Explain(ExplainArgs),
    Lint(LintArgs),
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

/// Explain why each rule file is, or is not, in the system prompt
///
/// Without TARGET: every rule file and URL opencode considered from the directory, in
/// prompt order, with its position, size and tokens when loaded and every reason when not.
/// TARGET can be a file (relative paths resolve from the current directory, then from
/// --cwd and each directory above it up to the repository root), a config `instructions`
/// entry, or a URL.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// A file, an `instructions` entry, or a URL
    pub target: Option<String>,

    /// The directory opencode would be started in [default: the current directory]
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,

    /// Output format: prose, JSON, or the provenance graph in Graphviz DOT
    #[arg(long, value_enum, default_value_t = ExplainFormat::Text)]
    pub format: ExplainFormat,
}

/// Check the rules opencode would load for mistakes, secrets and size
///
/// Exits 1 when a finding is at or above the --deny level, 0 otherwise.
#[derive(Debug, Args)]
pub struct LintArgs {
    /// The directory opencode would be started in [default: the current directory]
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,

    /// Output format
    #[arg(long, value_enum, default_value_t = LintFormat::Text)]
    pub format: LintFormat,

    /// The lowest severity that makes the command fail
    #[arg(long, value_enum, default_value_t = DenyLevel::Errors)]
    pub deny: DenyLevel,

    /// Token budget for the whole system prompt (o200k_base tokens)
    #[arg(long, value_name = "TOKENS", default_value_t = ctxgraph_queries::opencode::lint::Budget::default().total)]
    pub max_total_tokens: usize,

    /// Token budget for one rule file's block (o200k_base tokens)
    #[arg(long, value_name = "TOKENS", default_value_t = ctxgraph_queries::opencode::lint::Budget::default().rule)]
    pub max_rule_tokens: usize,
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
