//! A Python package from the package index in a virtual environment of its own, for the
//! tests that read (Aider) or run (pre-commit) a real Python tool. Called inside
//! [`crate::opencode::installed_once`], so each environment is made once per cache, under
//! the lock every test binary shares.

use std::path::Path;
use std::process::Command;

/// `python3 -m venv VENV` and `VENV/bin/pip install SPEC` (`--no-deps` unless `deps`).
///
/// # Panics
/// When either fails (no `python3` with `venv`, the index unreachable), saying so and naming
/// `skip_variable`, which points the test at an installation of its own instead.
pub fn install(venv: &Path, spec: &str, deps: bool, skip_variable: &str) {
    run(Command::new("python3").args(["-m", "venv"]).arg(venv), "`python3 -m venv`", spec, skip_variable);
    let mut pip = Command::new(venv.join("bin/pip"));
    pip.args(["install", "--quiet", "--disable-pip-version-check"]);
    if !deps {
        pip.arg("--no-deps");
    }
    // pip's own timeouts bound this.
    run(pip.arg(spec), &format!("`pip install {spec}`"), spec, skip_variable);
}

fn run(command: &mut Command, what: &str, spec: &str, skip_variable: &str) {
    let output = command.output().unwrap_or_else(|err| {
        panic!(
            "this test needs {spec}: {what} could not be run: {err}. \
             Install python3 with venv, or set {skip_variable} to an installation of {spec}"
        )
    });
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(15).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        panic!(
            "this test needs {spec}: {what} failed ({}); is the Python package index reachable? \
             Set {skip_variable} to skip the install.\nit said:\n{}",
            output.status,
            tail.join("\n")
        );
    }
}
