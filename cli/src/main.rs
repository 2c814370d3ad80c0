//! `ctxgraph`: see, explain and pin the exact context your coding agent sends.

use std::process::ExitCode;

use clap::Parser;

mod args;
mod commands;
mod error;
mod output;
mod render;

fn main() -> ExitCode {
    let args = args::Cli::parse();
    match commands::run(args) {
        Ok(code) => code,
        Err(err) => err.report(),
    }
}
