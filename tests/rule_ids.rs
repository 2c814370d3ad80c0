//! Every rule id the workspace cites is defined in `docs/opencode/`, and every definition the
//! index lists is where it says.
//!
//! The id grammar is written out in `docs/opencode/README.md#citing`; this file is its one
//! implementation. Scanned: the `.rs`, `.md`, `.toml`, `.sh` and `.snap` files of the
//! workspace (code, tests, docs, case descriptions and ctxgraph's own output snapshots), except
//! what opencode produced or was given: the recorded conformance snapshots (`snapshots/`) and
//! the fixture trees below a directory holding a `case.toml`.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use regex::Regex;

/// A rule or case id of `docs/opencode/` (see `docs/opencode/README.md#citing`), or a rule
/// id of another agent's profile (`CX`, `GM`, `CC`, `CP`, `QW` and a number, on `docs/profiles/<agent>.md`).
const ID: &str = r"(?:CX|GM|CC|CP|QW)[1-9][0-9]?|(?:INS|RD|SYS|FS|CTX|CFG|CMP|MSG|E)-[0-9]{2}|[PFCVJSRIBANKXGL][1-9][0-9]?(?:\.[1-9][0-9]?|a)?";
/// A lint code of `docs/lint.md`.
const LINT_CODE: &str = r"CG[0-9]{3}";

/// One citation: an id or lint code, or a range of ids (`P1–P7`, `K1-K11`, `E-01…E-18`).
fn citation_regex() -> Regex {
    Regex::new(&format!(r"(?P<first>{ID}|{LINT_CODE})(?:\s*(?:–|-|…|\.\.\.)\s*(?P<last>{ID}))?"))
        .expect("citation regex")
}

const HOW_TO_DEFINE: &str = "\
To define an id: add `### <a id=\"ANCHOR\"></a>ID · Title` (or a table row starting
`| <a id=\"ANCHOR\"></a>ID |`) to the stage's page in docs/opencode/ saying what opencode 1.18.33
does and how that was confirmed, and a row `| [ID](PAGE#ANCHOR) | … |` to the tables of
docs/opencode/README.md (lint codes: a section in docs/lint.md). If the id is a typo or a
range that runs past the last defined id, fix the citation instead.";

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the tests crate has a parent").to_path_buf()
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// A char that may not touch an id: the id would be part of a longer word.
fn is_word(c: Option<char>) -> bool {
    c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The ids one citation stands for: itself, or every id of a range (same prefix, numbers
/// in between, as many digits as the first: `E-08…E-10`, `C3.9–C3.10`).
fn expand(first: &str, last: Option<&str>) -> Vec<String> {
    let Some(last) = last else { return vec![first.to_owned()] };
    let split = |id: &str| {
        let cut = id.rfind(|c: char| !c.is_ascii_digit()).map_or(0, |i| i + 1);
        (id[..cut].to_owned(), id[cut..].to_owned())
    };
    let ((head, from), (last_head, to)) = (split(first), split(last));
    let width = from.len();
    match (from.parse::<u32>(), to.parse::<u32>()) {
        (Ok(from), Ok(to)) if head == last_head && from <= to => {
            (from..=to).map(|n| format!("{head}{n:0width$}")).collect()
        }
        // Not a range after all (`I9-I7`, `P1-C3`, `I6a-I7`): each end is a citation.
        _ => vec![first.to_owned(), last.to_owned()],
    }
}

/// `(file, line, id)` for every citation in `text`.
fn citations(re: &Regex, text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (number, line) in text.lines().enumerate() {
        for caps in re.captures_iter(line) {
            let whole = caps.get(0).expect("match");
            let before = line[..whole.start()].chars().next_back();
            let after = line[whole.end()..].chars().next();
            if is_word(before) || is_word(after) {
                continue;
            }
            let last = caps.name("last").map(|m| m.as_str());
            for id in expand(&caps["first"], last) {
                found.push((number + 1, id));
            }
        }
    }
    found
}

/// Files to scan below `dir`.
fn scanned_files(dir: &Path, root: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    // A conformance, config or CLI fixture: only its case.toml is ours, the rest is data.
    let fixture = entries.iter().any(|p| p.file_name().is_some_and(|n| n == "case.toml"));
    for path in entries {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_owned();
        let file_type = fs::symlink_metadata(&path).expect("metadata").file_type();
        if file_type.is_dir() {
            let skip =
                name.starts_with('.') || name == "target" || fixture || (dir == root && name == "snapshots");
            if !skip {
                scanned_files(&path, root, out);
            }
        } else if file_type.is_file()
            && ["rs", "md", "toml", "sh", "snap"].iter().any(|ext| name.ends_with(&format!(".{ext}")))
        {
            out.push(path);
        }
    }
}

/// The definitions: `id → (page, anchor)` from the index tables, checked against the pages.
fn definitions(root: &Path, problems: &mut Vec<String>) -> BTreeMap<String, (String, String)> {
    let docs = root.join("docs/opencode");
    let index = read(&docs.join("README.md"));
    let row = Regex::new(r"^\| \[([^\]]+)\]\(([a-z0-9-]+\.md)#([a-z0-9-]+)\) \|").expect("regex");
    let mut defined = BTreeMap::new();
    for (number, line) in index.lines().enumerate() {
        let Some(caps) = row.captures(line) else { continue };
        let (id, page, anchor) = (&caps[1], &caps[2], &caps[3]);
        let at = format!("docs/opencode/README.md:{}", number + 1);
        if let Some((other, _)) = defined.insert(id.to_owned(), (page.to_owned(), anchor.to_owned())) {
            problems.push(format!("{at}: {id} is listed twice (also on {other})"));
        }
        let target = docs.join(page);
        if !target.is_file() {
            problems.push(format!("{at}: {id} links to {page}, which does not exist"));
            continue;
        }
        let text = read(&target);
        let tag = format!("<a id=\"{anchor}\"></a>");
        if ![format!("{tag}{id} "), format!("{tag}**{id}**")].iter().any(|t| text.contains(t.as_str())) {
            problems.push(format!(
                "{at}: {page}#{anchor} does not resolve to a definition of {id} (expected `{tag}{id}` in {page})"
            ));
        }
    }
    // The other direction: every definition on a page is in the index.
    let anchor =
        Regex::new(&format!(r#"<a id="([a-z0-9-]+)"></a>(?:\*\*)?({ID})(?:\*\*| )"#)).expect("regex");
    let mut pages: Vec<_> =
        fs::read_dir(&docs).expect("docs/opencode").map(|e| e.expect("entry").path()).collect();
    pages.sort();
    for page in pages.iter().filter(|p| p.extension().is_some_and(|e| e == "md")) {
        let name = page.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        for (number, line) in read(page).lines().enumerate() {
            for caps in anchor.captures_iter(line) {
                let id = &caps[2];
                if defined.get(id).is_none_or(|(p, a)| p != name || a != &caps[1]) {
                    problems.push(format!(
                        "docs/opencode/{name}:{}: {id} is defined here but the index (docs/opencode/README.md) has no row `| [{id}]({name}#{}) |`",
                        number + 1,
                        &caps[1]
                    ));
                }
            }
        }
    }
    // The other agents' profiles: `### <a id="cx1"></a>CX1 · …` on docs/profiles/<agent>.md.
    let agent = Regex::new(r#"<a id="((?:cx|gm|cc|cp|qw)[1-9][0-9]?)"></a>((?:CX|GM|CC|CP|QW)[1-9][0-9]?) "#)
        .expect("regex");
    let mut pages: Vec<_> = fs::read_dir(root.join("docs/profiles"))
        .expect("docs/profiles")
        .map(|e| e.expect("entry").path())
        .collect();
    pages.sort();
    for page in pages.iter().filter(|p| p.extension().is_some_and(|e| e == "md")) {
        for caps in agent.captures_iter(&read(page)) {
            if caps[1].to_uppercase() != caps[2] {
                problems.push(format!("{}: anchor {} does not match {}", page.display(), &caps[1], &caps[2]));
            }
            let name = page.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            defined.insert(caps[2].to_owned(), (format!("../profiles/{name}"), caps[1].to_owned()));
        }
    }
    // ctxgraph's own lint codes.
    let lint = Regex::new(r#"<a id="(cg[0-9]{3})"></a>(CG[0-9]{3}) "#).expect("regex");
    for caps in lint.captures_iter(&read(&root.join("docs/lint.md"))) {
        if caps[1].to_uppercase() != caps[2] {
            problems.push(format!("docs/lint.md: anchor {} does not match {}", &caps[1], &caps[2]));
        }
        defined.insert(caps[2].to_owned(), ("../lint.md".to_owned(), caps[1].to_owned()));
    }
    defined
}

#[test]
fn every_cited_rule_id_is_defined() {
    let root = workspace_root();
    let mut problems = Vec::new();
    let defined = definitions(&root, &mut problems);

    let re = citation_regex();
    // The grammar itself, on the forms the docs promise.
    let ids = |text: &str| citations(&re, text).into_iter().map(|(_, id)| id).collect::<Vec<_>>();
    assert_eq!(ids("P1–P3, C3.5 and I6a"), ["P1", "P2", "P3", "C3.5", "I6a"]);
    assert_eq!(ids("C3.9-C3.10; E-08…E-10"), ["C3.9", "C3.10", "E-08", "E-09", "E-10"]);
    assert_eq!(ids("tests/conformance/E-12-nonroot and CG011"), ["E-12", "CG011"]);
    assert_eq!(ids("CX1–CX3 and CX6; not CX-01"), ["CX1", "CX2", "CX3", "CX6"]);
    assert!(ids(r"'\u{A0}', C0 AF, x86_64, sha256, v1.18, CI3, I4b, SI4").is_empty());

    let mut files = Vec::new();
    scanned_files(&root, &root, &mut files);
    assert!(files.len() > 50, "found only {} files under {}: wrong root?", files.len(), root.display());
    let mut cited = BTreeSet::new();
    for file in &files {
        let relative = file.strip_prefix(&root).unwrap_or(file).display().to_string();
        for (line, id) in citations(&re, &read(file)) {
            if !defined.contains_key(&id) {
                problems.push(format!(
                    "{relative}:{line}: cites {id}, which neither docs/opencode/ nor docs/lint.md defines"
                ));
            }
            cited.insert(id);
        }
    }
    // A scanner that finds nothing would pass vacuously.
    for id in ["I4", "C3.5", "N3", "E-12", "CG001", "CX5"] {
        assert!(cited.contains(id), "the scan found no citation of {id}: is the grammar broken?");
    }
    assert!(problems.is_empty(), "{}\n\n{HOW_TO_DEFINE}", problems.join("\n"));
}
