//! Skills (B5): ctxgraph's skills block against the one the real opencode 1.18.33 sent, for
//! every case under `tests/conformance/skills/` (fixture + `expected.txt`, recorded by
//! `tests/oracle/record-skills.sh`), on the in-memory file system and on disk.
//!
//! The recording keeps opencode's own prose out of the repository: each line before the
//! listing (the two opening lines, and the line standing for an empty listing) and the
//! built-in skill's description are replaced by `blake3:<hex>` of their text. The block is
//! rendered here with the texts loaded from the installed opencode (`.ci/run` installs it) and
//! the same replacement applied, so every byte is compared, the loaded texts through their
//! hashes.

use ctxgraph_db::installation::InstallationState;
use ctxgraph_db::lint::Budget;
use ctxgraph_db::tokens::BytesPerFour;
use ctxgraph_engine::installation::{Locate, load};
use ctxgraph_engine::remote::{FetchOptions, Fetcher};
use ctxgraph_opencode::lint::lint;
use ctxgraph_opencode::skills::explain::explain_skills;
use ctxgraph_opencode::skills::{render, skills, skills_block};
use ctxgraph_test_support::http::{Reply, Server};
use ctxgraph_test_support::opencode;
use ctxgraph_tests::{Backend, Case, Opened, open_with_env, skill_cases};
use std::fmt::Write as _;
use std::path::Path;
use std::sync::OnceLock;

use regex::Regex;

/// Every file under `site` served at its path; anything else is a 404.
fn serve(site: &Path) -> Server {
    fn walk(dir: &Path, site: &Path, out: &mut Vec<(String, Vec<Reply>)>) {
        for entry in std::fs::read_dir(dir).expect("site dir").map(Result::unwrap) {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, site, out);
            } else {
                let route = format!("/{}", path.strip_prefix(site).unwrap().to_string_lossy());
                out.push((route, vec![Reply::ok(std::fs::read(&path).unwrap())]));
            }
        }
    }
    let mut routes = Vec::new();
    walk(site, site, &mut routes);
    Server::start(routes)
}

/// opencode's texts from the installed 1.18.33 (loaded once for the whole module).
fn installation() -> &'static InstallationState {
    static STATE: OnceLock<InstallationState> = OnceLock::new();
    STATE.get_or_init(|| {
        let state = load(&Locate::Flag(opencode::installed()));
        assert!(matches!(state, InstallationState::Found(_)), "{state:?}");
        state
    })
}

/// The recording's treatment of opencode's prose: every line before `<available_skills>`
/// (all of them when nothing is listed) and the built-in skill's description become
/// `blake3:<hex>` of their text.
fn hash_opencode_prose(block: &str) -> String {
    let hashed = |text: &str| format!("blake3:{}", blake3::hash(text.as_bytes()).to_hex());
    let lines: Vec<&str> = block.split('\n').collect();
    let listing = lines.iter().position(|line| *line == "<available_skills>").unwrap_or(lines.len());
    let (prose, listed) = lines.split_at(listing);
    let block = prose.iter().map(|line| hashed(line)).chain(listed.iter().map(|line| (*line).to_owned()));
    let block = block.collect::<Vec<_>>().join("\n");
    let re = Regex::new(
        r"(?s)(<name>customize-opencode</name>\n    <description>)(.*?)(</description>\n    <location>&lt;built-in&gt;</location>)",
    )
    .unwrap();
    re.replace(&block, |c: &regex::Captures<'_>| format!("{}{}{}", &c[1], hashed(&c[2]), &c[3])).into_owned()
}

/// ctxgraph's block for a case (opencode's default agent, as `capture.sh` runs it),
/// normalised and hashed like the recording.
fn rendered(case: &Case, opened: &Opened) -> String {
    let block = skills_block(opened.engine.db(), opened.ws, "build".to_owned())
        .as_ref()
        .unwrap_or_else(|e| panic!("{}: {e}", case.id));
    match block {
        Some(block) => hash_opencode_prose(&opened.normalize(&block.text)),
        None => "<no skills block>".to_owned(),
    }
}

/// B5.7: for a name opencode picks by a race, the recorded entry must be one ctxgraph
/// could have listed (a file it found with that name); the expected text then takes
/// ctxgraph's pick so that the rest of the block is still compared byte for byte.
fn accept_racy(case: &Case, opened: &Opened, expected: &str, ours: &str) -> String {
    let db = opened.engine.db();
    let skills = skills(db, opened.ws).as_ref().unwrap();
    let mut expected = expected.to_owned();
    for name in &case.racy {
        let entry = |text: &str| {
            let re = Regex::new(&format!(
                r"  <skill>\n    <name>{}</name>\n    <description>(.*)</description>\n    <location>(.*)</location>\n  </skill>",
                regex::escape(name)
            ))
            .unwrap();
            let caps =
                re.captures(text).unwrap_or_else(|| panic!("{}: no entry for {name} in\n{text}", case.id));
            (caps[0].to_owned(), caps[1].to_owned(), caps[2].to_owned())
        };
        let (recorded, description, location) = entry(&expected);
        let candidates: Vec<(String, String)> = skills
            .found
            .iter()
            .filter(|found| found.fate.skill().is_some_and(|(n, _)| n == name))
            .map(|found| {
                let description = found.fate.skill().and_then(|(_, d)| d).unwrap_or_default().to_owned();
                (description, opened.normalize(&render::escape_location(&found.path.to_string_lossy())))
            })
            .collect();
        assert!(
            candidates.len() >= 2,
            "{}: {name} is marked racy but ctxgraph found {} file(s) with that name",
            case.id,
            candidates.len()
        );
        assert!(
            candidates.contains(&(description.clone(), location.clone())),
            "{}: opencode listed {name} from {location} ({description}), not among ctxgraph's candidates {candidates:?}",
            case.id
        );
        expected = expected.replace(&recorded, &entry(ours).0);
    }
    expected
}

/// The case opened on `backend`. A case with a `site/` gets it served on 127.0.0.1 as the
/// recording did, its base URL in `$SKILLS_URL`, and the engine fetches what `skills.urls`
/// needs.
fn open_fetched(case: &Case, backend: Backend) -> (Opened, Option<Server>) {
    let server = case.dir.join("site").is_dir().then(|| serve(&case.dir.join("site")));
    let extra = server.iter().map(|s| ("SKILLS_URL".to_owned(), s.url(""))).collect();
    let mut opened = open_with_env(case, backend, extra);
    if server.is_some() {
        let fetcher = Fetcher::new(FetchOptions { retries: 0, ..FetchOptions::default() }).expect("fetcher");
        let ws = opened.ws;
        opened.engine.fetch_remote(ws, &fetcher).expect("fetch");
    }
    (opened, server)
}

fn check_all(backend: Backend) {
    let cases = skill_cases();
    assert!(cases.len() >= 8, "expected the skills cases, found {}", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let recorded = std::fs::read_to_string(case.dir.join("expected.txt"))
            .unwrap_or_else(|e| panic!("{}: {e}; run tests/oracle/record-skills.sh {}", case.id, case.id));
        let recorded = recorded.strip_suffix('\n').unwrap_or(&recorded);
        let (mut opened, _server) = open_fetched(case, backend);
        opened.engine.set_installation(installation().clone());
        let ours = rendered(case, &opened);
        let expected = accept_racy(case, &opened, recorded, &ours);
        if ours != expected {
            failures.push(format!("{}:\n--- opencode\n{expected}\n--- ctxgraph\n{ours}\n", case.id));
        }
    }
    assert!(
        failures.is_empty(),
        "{} case(s) differ from the oracle:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn in_memory() {
    check_all(Backend::Memory);
}

#[test]
fn on_disk() {
    check_all(Backend::Disk);
}

/// `explain`'s account of every case: why each skill is in or out of the build agent's block.
#[test]
fn explain_says_why_each_skill_is_in_or_out() {
    for case in skill_cases() {
        let (opened, server) = open_fetched(&case, Backend::Memory);
        let explanation = explain_skills(opened.engine.db(), opened.ws, "build").expect("explain");
        let mut prose = opened.normalize(&explanation.prose());
        if let Some(server) = &server {
            prose = prose.replace(&server.url(""), "<SKILLS_URL>");
        }
        insta::assert_snapshot!(format!("explain_{}", case.id), prose);
    }
}

/// `lint`'s skill codes (CG017–CG020) on every case, with a per-block budget small enough
/// that a listing of the case's own skills trips CG019. The installation is loaded so that
/// CG019 counts the block opencode sends, its own sentences included.
#[test]
fn lint_reports_skill_problems() {
    let budget = Budget { total: usize::MAX, rule: 300 };
    for case in skill_cases() {
        let (mut opened, _server) = open_fetched(&case, Backend::Memory);
        opened.engine.set_installation(installation().clone());
        let findings = lint(opened.engine.db(), opened.ws, &BytesPerFour, budget).expect("lint");
        let mut out = String::new();
        for finding in findings.iter().filter(|f| f.code.id() >= "CG017") {
            let at = finding.location.as_ref().map_or(String::new(), |l| {
                let pos = l.line.map(|line| format!(":{line}")).unwrap_or_default()
                    + &l.column.map(|c| format!(":{c}")).unwrap_or_default();
                format!(" at {}{pos}", l.uri)
            });
            let _ =
                write!(out, "{} {}{at}\n    {}\n", finding.code.id(), finding.code.name(), finding.message);
        }
        insta::assert_snapshot!(format!("lint_{}", case.id), opened.normalize(&out));
    }
}

/// B5.7's cost: a case whose recording marks a skill racy (two files, or one file under two
/// paths) has a skills block `build --format json` marks unstable, and no other case does;
/// one skill under two paths (`two-paths`, the layout `npx skills` makes) is CG021, whose fix
/// removes the symlink, never the directory it points to.
#[test]
fn racy_skills_make_the_block_unstable_and_two_paths_is_cg021() {
    let mut two_paths = 0;
    for case in skill_cases() {
        let (opened, _server) = open_fetched(&case, Backend::Memory);
        let db = opened.engine.db();
        let block = skills_block(db, opened.ws, "build".to_owned()).as_ref().expect("block").clone();
        let unstable = block.and_then(|b| b.unstable);
        assert_eq!(unstable.is_some(), !case.racy.is_empty(), "{}: {unstable:?}", case.id);
        let findings = lint(db, opened.ws, &BytesPerFour, Budget::default()).expect("lint");
        for finding in findings.iter().filter(|f| f.code.id() == "CG021") {
            assert_eq!(case.id, "two-paths", "{}: {}", case.id, finding.message);
            let hint = opened.normalize(&finding.hint);
            assert!(
                hint.starts_with("keep one path: remove the symlink <FIXTURE>/.claude/skills/shared;"),
                "{hint}"
            );
            two_paths += 1;
        }
    }
    assert_eq!(two_paths, 1, "CG021 findings");
}
