//! Lint on the rule-file layouts of real public repositories (`tests/lint_corpus/`).
//!
//! Each `.fixture` keeps one repository's layout: the paths of its rule files, skills and
//! opencode configs, its symlinks, and placeholder text that reproduces only what lint
//! reads (which lines say "never"/"must", which other rule files a file names, an import
//! line). `//! run <cwd>` lines say where lint runs (default `/repo`). What lint should
//! say was decided by reading the real files, not by running ctxgraph:
//!
//! - `//! expect <cwd> <CODE> <path> <why>`: a finding that is right;
//! - `//! wrong <cwd> <CODE> <path> <why>`: a finding lint makes that is wrong (kept
//!   visible so precision is measured, not hidden);
//! - `//! missed <cwd> <CODE> <path> <why>`: a finding lint should make and does not.
//!
//! Lint must make exactly the expected and the wrong findings. The precision per code over
//! the whole corpus is a snapshot, quoted in the README.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use ctxgraph_db::lint::{Budget, Code};
use ctxgraph_test_support::fixture::Fixture;

use super::check;

type Key = (String, String, String);

#[derive(Clone, Default)]
struct Tally {
    right: usize,
    wrong: usize,
    missed: usize,
}

fn expectations(fixture: &Fixture, verdict: &str) -> BTreeSet<Key> {
    fixture
        .meta(verdict)
        .map(|line| {
            let mut words = line.split_whitespace();
            let mut next = || {
                words
                    .next()
                    .unwrap_or_else(|| panic!("`//! {verdict} {line}`: want <cwd> <CODE> <path> <why>"))
                    .to_owned()
            };
            let key = (next(), next(), next());
            assert!(words.next().is_some(), "`//! {verdict} {line}`: say why");
            key
        })
        .collect()
}

#[test]
fn lint_on_real_layouts() {
    let mut tallies: BTreeMap<&'static str, Tally> = BTreeMap::new();
    let mut repositories = 0;
    insta::glob!("../lint_corpus", "*.fixture", |path: &Path| {
        repositories += 1;
        let fixture = Fixture::parse(&std::fs::read_to_string(path).expect("corpus file"));
        assert!(fixture.meta("source").next().is_some(), "{}: name the source commit", path.display());
        let runs: Vec<&str> = fixture.meta("run").collect();
        let runs = if runs.is_empty() { vec!["/repo"] } else { runs };
        let (expected, wrong, missed) = (
            expectations(&fixture, "expect"),
            expectations(&fixture, "wrong"),
            expectations(&fixture, "missed"),
        );
        let mut actual = BTreeSet::new();
        for cwd in &runs {
            let (engine, ws) = check::engine_at(&fixture, Path::new(cwd));
            for finding in engine.lint(ws, Budget::default()).expect("lint runs") {
                let uri = finding.location.map(|l| l.uri).unwrap_or_default();
                actual.insert((cwd.to_string(), finding.code.id().to_owned(), uri));
            }
        }
        let made: BTreeSet<Key> = expected.union(&wrong).cloned().collect();
        let show = |set: BTreeSet<&Key>| {
            set.iter().fold(String::new(), |mut out, (c, k, p)| {
                let _ = write!(out, "\n  {c} {k} {p}");
                out
            })
        };
        assert!(
            actual == made,
            "{}: lint's findings differ from the corpus' verdicts\nunexpected:{}\nnot made:{}",
            path.display(),
            show(actual.difference(&made).collect()),
            show(made.difference(&actual).collect()),
        );
        for (set, field) in [(&expected, 0), (&wrong, 1), (&missed, 2)] {
            for (_, code, _) in set {
                let code = Code::ALL.iter().find(|c| c.id() == code).expect("a known code").id();
                let tally = tallies.entry(code).or_default();
                *[&mut tally.right, &mut tally.wrong, &mut tally.missed][field] += 1;
            }
        }
    });
    assert!(repositories >= 5, "the corpus has {repositories} repositories");
    let mut table =
        String::from("| code | findings | right | wrong | missed | precision |\n|---|---|---|---|---|---|\n");
    for code in Code::ALL {
        let tally = tallies.get(code.id()).cloned().unwrap_or_default();
        let made = tally.right + tally.wrong;
        let precision = (100 * tally.right).checked_div(made).map_or("–".to_owned(), |p| format!("{p}%"));
        let _ = writeln!(
            table,
            "| {} {} | {made} | {} | {} | {} | {precision} |",
            code.id(),
            code.name(),
            tally.right,
            tally.wrong,
            tally.missed
        );
    }
    insta::assert_snapshot!("lint_corpus_precision", table);
}
