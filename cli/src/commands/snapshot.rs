//! `ctxgraph snapshot` and `ctxgraph init-check`.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use ctxgraph_check::{Project, SCENARIOS_FILE, propose, snapshot::write_atomic};

use crate::args::{ScenariosArg, SnapshotArgs};
use crate::error::CliError;
use crate::output::write_stdout;

pub fn run(args: SnapshotArgs) -> Result<ExitCode, CliError> {
    if args.init {
        return init(args.scenarios);
    }
    let project = Project::load(&scenarios_file(&args.scenarios)?)?;
    let written = project.snapshot(&args.names)?;
    let mut out = String::new();
    for w in &written {
        let _ = writeln!(out, "wrote {} ({} o200k_base tokens)", w.path, w.tokens);
    }
    write_stdout(out.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

pub fn init(arg: ScenariosArg) -> Result<ExitCode, CliError> {
    let target = match arg.scenarios {
        Some(path) => path,
        None => ctxgraph_check::worktree_root(&current_dir()?).join(SCENARIOS_FILE),
    };
    let base = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), PathBuf::from);
    let proposal = propose::propose(&base);
    if target.exists() {
        let mut out = format!("# {} exists; ctxgraph proposes:\n", target.display());
        out.push_str(&proposal);
        write_stdout(out.as_bytes())?;
    } else {
        write_atomic(&target, proposal.as_bytes()).map_err(|source| {
            CliError::Check(ctxgraph_check::SnapshotFailure::Write { path: target.clone(), source })
        })?;
        let count = proposal.matches("\n[scenario.").count();
        write_stdout(
            format!(
                "wrote {} with {count} scenario{}; next: ctxgraph snapshot, then commit both\n",
                target.display(),
                if count == 1 { "" } else { "s" }
            )
            .as_bytes(),
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `--scenarios`, or the nearest `ctxgraph.toml` from the current directory up.
pub fn scenarios_file(arg: &ScenariosArg) -> Result<PathBuf, CliError> {
    match &arg.scenarios {
        Some(path) => Ok(path.clone()),
        None => Ok(ctxgraph_check::locate(&current_dir()?)?),
    }
}

fn current_dir() -> Result<PathBuf, CliError> {
    std::env::current_dir().map_err(|err| {
        CliError::Engine(ctxgraph_engine::EngineError::WorkingDirectory {
            path: PathBuf::from("."),
            reason: err.to_string(),
        })
    })
}
