//! Conformance: ctxgraph against the bytes recorded from the real opencode 1.18.33 binary.
//!
//! Each `tests/conformance/<ID>` case is run on the in-memory `System` and on a real
//! temporary directory; both must reproduce `snapshots/conformance__<ID>.snap`, which
//! `tests/oracle/record.sh` wrote from the oracle (never from ctxgraph's output).

use std::panic::{AssertUnwindSafe, catch_unwind};

use ctxgraph_tests::{Backend, Outcome, cases, run, snapshot_body};

fn check_all(backend: Backend) {
    let mut settings = insta::Settings::clone_current();
    // record.sh names the snapshots `conformance__<ID>`, whatever module runs them.
    settings.set_snapshot_path("../snapshots");
    settings.set_prepend_module_to_snapshot(false);
    let _guard = settings.bind_to_scope();

    // A loop rather than insta::glob!: glob! walks the fixtures following symlinks, and
    // several cases are symlink loops on purpose (its walker stops with an error there).
    let cases = cases();
    assert!(cases.len() >= 60, "expected the full conformance suite, found {} cases", cases.len());
    let mut failures = Vec::new();
    let mut checked = 0;
    for case in &cases {
        let expected = snapshot_body(&case.id);
        let result = catch_unwind(AssertUnwindSafe(|| {
            match (&case.oracle_error, run(case, backend, expected.as_deref())) {
                (None, Outcome::Rendered(rendered)) => {
                    assert!(
                        expected.is_some(),
                        "{}: no recorded snapshot; run tests/oracle/record.sh {}",
                        case.id,
                        case.id
                    );
                    insta::assert_snapshot!(format!("conformance__{}", case.id), rendered);
                    true
                }
                (None, Outcome::Refused(err)) => {
                    panic!("{}: opencode builds a prompt, ctxgraph refused: {err}", case.id)
                }
                (Some(_), Outcome::Refused(_)) => true,
                (Some(oracle), Outcome::Rendered(rendered)) => {
                    panic!("{}: opencode refused ({oracle}), ctxgraph built:\n{rendered}", case.id)
                }
                (_, Outcome::Skipped(_)) => false,
            }
        }));
        match result {
            Ok(ran) => checked += usize::from(ran),
            Err(_) => failures.push(case.id.clone()),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ from the oracle: {failures:?}",
        failures.len(),
        cases.len()
    );
    assert!(checked + 2 >= cases.len(), "only {checked} of {} cases ran", cases.len());
}

#[test]
fn in_memory() {
    check_all(Backend::Memory);
}

#[test]
fn on_disk() {
    check_all(Backend::Disk);
}
