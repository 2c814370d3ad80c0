//! `ctxgraph`: see, explain and pin the exact context your coding agent sends.

use std::process::ExitCode;

use clap::Parser;

mod args;
mod commands;
mod diagnostic;
mod error;
mod output;
mod panic;
mod render;
mod report;

fn main() -> ExitCode {
    panic::exit_internal_on_panic();
    // Every output's redaction knows the values `{env:}` could have put anywhere.
    let env: Vec<(String, String)> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    ctxgraph_db::secrets::install(ctxgraph_db::secrets::Redactor::new(
        env.iter().map(|(k, v)| (k.as_str(), v.as_str())),
    ));
    let args = args::Cli::parse();
    match args.color {
        args::ColorWhen::Auto => {}
        args::ColorWhen::Always => anstream::ColorChoice::Always.write_global(),
        args::ColorWhen::Never => anstream::ColorChoice::Never.write_global(),
    }
    let json_output = args.command.json_output();
    match commands::run(args) {
        Ok(code) => code,
        Err(err) => err.report(json_output),
    }
}
