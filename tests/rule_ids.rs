//! Every rule id the workspace cites is defined in `docs/opencode/`, and every definition the
//! index lists is where it says; every section of the workspace memory's reference that is
//! cited is a heading of `docs/memory.md`.
//!
//! The id grammar is written out in `docs/opencode/README.md#citing`; this file is its one
//! implementation. Scanned: the `.rs`, `.md`, `.toml`, `.sh` and `.snap` files of the
//! workspace (code, tests, docs, case descriptions and ctxgraph's own output snapshots), except
//! what opencode produced or was given: the recorded conformance snapshots (`snapshots/`) and
//! the fixture trees below a directory holding a `case.toml`.
//!
//! Memory citations are `docs/memory.md §N` anywhere (also in `.json`, `.txt` and `.ts`
//! files), and a bare `§N` in the memory code; each `N` must be a `§N` heading of the page.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use regex::Regex;

/// A rule or case id of `docs/opencode/` (see `docs/opencode/README.md#citing`), or a rule
/// id of another agent's profile (`CX`, `GM`, `CC`, `CP`, `QW`, `KI`, `CL`, `CN`, `AI`, `PI`, `AU` and a number, on `docs/profiles/<agent>.md`).
const ID: &str = r"(?:CX|GM|CC|CP|QW|KI|CL|CN|AI|PI|AU)[1-9][0-9]?|(?:INS|RD|SYS|FS|CTX|CFG|CMP|MSG|E)-[0-9]{2}|[PFCVJSRIBANKXGL][1-9][0-9]?(?:\.[1-9][0-9]?|a)?";
/// A lint code of `docs/lint.md`.
const LINT_CODE: &str = r"CG[0-9]{3}";

/// One citation: an id or lint code, or a range of ids (`P1–P7`, `K1-K11`, `E-01…E-18`).
pub(crate) fn citation_regex() -> Regex {
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

/// What a rule id citation can sit in.
const CITING: &[&str] = &["rs", "md", "toml", "sh", "snap"];

/// Files to scan below `dir`: those whose names end in one of `extensions`.
fn scanned_files(dir: &Path, root: &Path, extensions: &[&str], out: &mut Vec<PathBuf>) {
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
                scanned_files(&path, root, extensions, out);
            }
        } else if file_type.is_file() && extensions.iter().any(|ext| name.ends_with(&format!(".{ext}"))) {
            out.push(path);
        }
    }
}

/// The definitions: `id → (page, anchor)` from the index tables, checked against the pages.
pub(crate) fn definitions(root: &Path, problems: &mut Vec<String>) -> BTreeMap<String, (String, String)> {
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
    let agent = Regex::new(
        r#"<a id="((?:cx|gm|cc|cp|qw|ki|cl|cn|ai|pi|au)[1-9][0-9]?)"></a>((?:CX|GM|CC|CP|QW|KI|CL|CN|AI|PI|AU)[1-9][0-9]?) "#,
    )
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
    scanned_files(&root, &root, CITING, &mut files);
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

/// The workspace memory's reference, from the workspace root.
const MEMORY_DOC: &str = "docs/memory.md";
/// Its file name, spelt so that this file's messages do not mention it with another path.
const PAGE: &str = concat!("memory", ".md");

/// Where a bare section sign cites [`MEMORY_DOC`]: the memory crates, the query layer's memory
/// module, the memory CLI and the page itself (each names the page at its top). Elsewhere a
/// bare one may cite another document.
const MEMORY_CODE: &[&str] =
    &["memory/", "queries/recall/", "queries/src/memory/", "cli/src/commands/memory.rs", MEMORY_DOC];

/// What a memory citation can sit in: the files rule ids are looked for in, plus JSON, text
/// and the TypeScript of the integrations.
const MEMORY_CITING: &[&str] = &["rs", "md", "toml", "sh", "snap", "json", "txt", "ts"];

/// A section (`§8`, `§11.5`) or a range of them (`§3–§9`, `§11.2–§11.4`).
const SECTION: &str = r"§(?P<first>[0-9]+(?:\.[0-9]+)?)(?:\s*[–-]\s*§?(?P<last>[0-9]+(?:\.[0-9]+)?))?";

struct MemoryGrammar {
    /// A mention of the page: the path before its name, and the section when one follows.
    mention: Regex,
    /// A section sign and number on its own.
    bare: Regex,
}

impl MemoryGrammar {
    fn new() -> Self {
        MemoryGrammar {
            mention: Regex::new(&format!(r"(?P<path>[A-Za-z0-9_./-]*)memory\.md`?(?:[ \t]?{SECTION})?"))
                .expect("regex"),
            bare: Regex::new(SECTION).expect("regex"),
        }
    }
}

/// The sections a citation stands for: itself, or every one of a range (`3`–`9`, `11.2`–`11.4`).
fn memory_sections(first: &str, last: Option<&str>) -> Vec<String> {
    let Some(last) = last else { return vec![first.to_owned()] };
    let span =
        |from: &str, to: &str, name: &dyn Fn(u32) -> String| match (from.parse::<u32>(), to.parse::<u32>()) {
            (Ok(from), Ok(to)) if from <= to => (from..=to).map(name).collect(),
            _ => vec![first.to_owned(), last.to_owned()],
        };
    match (first.split_once('.'), last.split_once('.')) {
        (None, None) => span(first, last, &|n| n.to_string()),
        (Some((major, from)), Some((other, to))) if major == other => {
            span(from, to, &|n| format!("{major}.{n}"))
        }
        _ => vec![first.to_owned(), last.to_owned()],
    }
}

/// `path` (with `/`, `.` and `..`) from the directory `dir`, both relative to the root.
fn resolve(dir: &str, path: &str) -> String {
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    parts.join("/")
}

/// The section numbers [`MEMORY_DOC`] has headings for (`## §8 …`, `### §11.5 …`).
fn memory_headings(doc: &str, problems: &mut Vec<String>) -> BTreeSet<String> {
    let heading = Regex::new(r"^(?P<level>#+) §(?P<number>[0-9]+(?:\.[0-9]+)?) \S").expect("regex");
    let mut headings = BTreeSet::new();
    for (number, line) in doc.lines().enumerate() {
        let Some(caps) = heading.captures(line) else { continue };
        let section = &caps["number"];
        let at = format!("{MEMORY_DOC}:{}", number + 1);
        let level = if section.contains('.') { "###" } else { "##" };
        if &caps["level"] != level {
            problems.push(format!("{at}: §{section} is a `{level}` heading"));
        }
        if let Some((parent, _)) = section.split_once('.')
            && !headings.contains(parent)
        {
            problems.push(format!("{at}: §{section} comes before (or without) §{parent}"));
        }
        if !headings.insert(section.to_owned()) {
            problems.push(format!("{at}: §{section} is a heading twice"));
        }
    }
    headings
}

/// What is wrong with the memory citations of one file, `relative` to the root; every section
/// cited goes into `cited`.
fn memory_problems(
    grammar: &MemoryGrammar,
    relative: &str,
    text: &str,
    headings: &BTreeSet<String>,
    cited: &mut BTreeSet<String>,
) -> Vec<String> {
    let dir = relative.rsplit_once('/').map_or("", |(dir, _)| dir);
    let bare_cites_the_page = MEMORY_CODE.iter().any(|prefix| relative.starts_with(prefix));
    let mut problems = Vec::new();
    let mut check = |at: &str, first: &str, last: Option<&str>, how: &str, problems: &mut Vec<String>| {
        for section in memory_sections(first, last) {
            if !headings.contains(&section) {
                problems.push(format!("{at}: cites {how}§{section}, which is not a heading of {MEMORY_DOC}"));
            }
            cited.insert(section);
        }
    };
    for (number, line) in text.lines().enumerate() {
        let at = format!("{relative}:{}", number + 1);
        let mut spans = Vec::new();
        for caps in grammar.mention.captures_iter(line) {
            let path = &caps["path"];
            // Another file whose name ends in the page's (`agent-memory.md`).
            if !path.is_empty() && !path.ends_with('/') {
                continue;
            }
            let whole = caps.get(0).expect("match");
            spans.push(whole.range());
            match caps.name("first") {
                Some(first) if path == "docs/" => {
                    check(&at, first.as_str(), caps.name("last").map(|m| m.as_str()), "docs/memory.md ", &mut problems);
                }
                Some(_) => problems.push(format!(
                    "{at}: `{}` cites the memory reference as `{path}{PAGE}`: write `docs/memory.md §N`",
                    whole.as_str()
                )),
                None if path == "docs/" || resolve(dir, &format!("{path}{PAGE}")) == MEMORY_DOC => {}
                None => problems.push(format!(
                    "{at}: `{path}{PAGE}` is not {MEMORY_DOC}, the workspace memory's reference in this repository"
                )),
            }
        }
        if !bare_cites_the_page {
            continue;
        }
        for caps in grammar.bare.captures_iter(line) {
            let whole = caps.get(0).expect("match");
            if spans.iter().any(|span| span.contains(&whole.start())) {
                continue;
            }
            // A section of another page, named right before it (`rust-stack.md §4`).
            let before = Path::new(line[..whole.start()].trim_end().trim_end_matches('`'));
            if before.extension().is_some_and(|ext| ext.eq_ignore_ascii_case("md")) {
                continue;
            }
            check(&at, &caps["first"], caps.name("last").map(|m| m.as_str()), "", &mut problems);
        }
    }
    problems
}

/// Text with `PAGE` for the page's file name and `@` for the section sign, so that this file's
/// own examples cite nothing.
fn made_up(template: &str) -> String {
    template.replace("PAGE", PAGE).replace('@', "\u{a7}")
}

#[test]
fn every_memory_citation_is_a_heading_of_docs_memory_md() {
    let root = workspace_root();
    let grammar = MemoryGrammar::new();
    let mut problems = Vec::new();
    let headings = memory_headings(&read(&root.join(MEMORY_DOC)), &mut problems);

    // The checker, on made-up text.
    let known: BTreeSet<String> = ["3", "3.1", "3.2", "8"].map(str::to_owned).into();
    let check = |relative: &str, template: &str| {
        memory_problems(&grammar, relative, &made_up(template), &known, &mut BTreeSet::new())
    };
    assert_eq!(check("README.md", "see docs/PAGE @8 and (docs/PAGE @3.1–@3.2)"), Vec::<String>::new());
    let wrong_path = check("README.md", "see PAGE @8, spec/PAGE @8");
    assert_eq!(wrong_path.len(), 2, "{wrong_path:?}");
    assert!(wrong_path[0].contains("write `docs/memory.md §N`"), "{wrong_path:?}");
    assert_eq!(check("cli/src/x.rs", "\"docs/PAGE @9\"").len(), 1);
    assert_eq!(check("README.md", "docs/PAGE @3–@8").len(), 4, "a range stands for each section in it");
    assert_eq!(check("README.md", "design in shared/spec/PAGE").len(), 1);
    assert_eq!(check("README.md", "agent-PAGE, MEMORY.md, [it](docs/PAGE)"), Vec::<String>::new());
    assert_eq!(check("docs/opencode/x.md", "[memory](../PAGE)"), Vec::<String>::new());
    assert_eq!(check("memory/src/x.rs", "// @3.2 and @9, rust-stack.md @4").len(), 1);
    assert_eq!(check("queries/src/opencode/x.rs", "// @9 of another document"), Vec::<String>::new());

    let mut files = Vec::new();
    scanned_files(&root, &root, MEMORY_CITING, &mut files);
    let mut cited = BTreeSet::new();
    for file in &files {
        let relative = file.strip_prefix(&root).unwrap_or(file).display().to_string();
        let bytes = fs::read(file).unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
        problems.extend(memory_problems(
            &grammar,
            &relative,
            &String::from_utf8_lossy(&bytes),
            &headings,
            &mut cited,
        ));
    }
    // A scanner that finds nothing would pass vacuously.
    for section in ["2", "3.1", "3.4", "4.4", "8", "11", "11.5", "12", "16"] {
        assert!(
            cited.contains(section),
            "the scan found no citation of section {section}: is the grammar broken?"
        );
    }
    assert!(
        problems.is_empty(),
        "{}\n\nCite the workspace memory's reference as `docs/memory.md §N`, N a heading `§N …` of docs/memory.md.",
        problems.join("\n")
    );
}
