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
    Watch(WatchArgs),
    Serve(ServeArgs),
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

/// Rebuild the system prompt on every file change, one line per rebuild
///
/// Each line: the prompt's blake3 hash (first 16 hex digits), its size in bytes, the blocks
/// added, removed and changed since the previous build, and how many queries executed.
/// Only the directories the build looked at are watched.
#[derive(Debug, Args)]
pub struct WatchArgs {
    /// The directory opencode would be started in [default: the current directory]
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,

    /// Add the model line to the environment block
    #[arg(long, value_name = "PROVIDER/ID")]
    pub model: Option<ModelRef>,
}

/// Serve builds to an agent host: JSON-RPC 2.0, one JSON object per line
///
/// Methods: build {cwd, section?, model?}, nearby {file, cwd}, stats, shutdown. See the
/// README for the message shapes.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Talk over stdin and stdout (the only transport for now)
    #[arg(long, required = true)]
    pub stdio: bool,

    /// Do not watch files; re-check every known path before each request instead
    #[arg(long)]
    pub no_watch: bool,
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
