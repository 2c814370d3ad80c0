//! `lint --agent all`: findings about what each agent sees (CG005, a likely secret in any
//! file an agent sends) and what one agent sees and the others do not (CG012, CG013),
//! `docs/lint.md`, read off every agent's layout. Each agent's own findings are in its folder
//! (`<agent>/lint.rs`).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::files::{file_bytes, file_text};
use ctxgraph_db::lint::{Code, Finding, Location, SECRET_HINT};
use ctxgraph_db::path;
use ctxgraph_db::profile::{Layout, Profile};
use ctxgraph_db::secrets::find_secrets;

/// CG005 for every agent: each file a layout sends, or inlines into what it sends (an
/// `@import`, Claude Code's `@.env`), read once, each likely secret in it reported once
/// with every agent that sends the file.
pub fn secret_findings(db: &dyn Db, layouts: &[Layout]) -> Vec<Finding> {
    let mut sent: BTreeMap<&Path, Vec<&'static str>> = BTreeMap::new();
    for layout in layouts {
        for block in &layout.blocks {
            for path in block.source.path().into_iter().chain(block.inlines.iter().map(PathBuf::as_path)) {
                let agents = sent.entry(path).or_default();
                if !agents.contains(&layout.agent) {
                    agents.push(layout.agent);
                }
            }
        }
    }
    let mut findings = Vec::new();
    for (path, agents) in sent {
        let Ok(text) = file_text(db, db.files().get(db, path)) else { continue };
        for secret in find_secrets(&text.text) {
            findings.push(Finding {
                code: Code::LikelySecret,
                severity: Code::LikelySecret.severity(),
                message: format!(
                    "{} contains a likely {} (line {}); {} send{} it to the model provider",
                    path::display(path),
                    secret.kind,
                    secret.line,
                    agents.join(", "),
                    if agents.len() == 1 { "s" } else { "" }
                ),
                location: Some(Location {
                    uri: path::display(path),
                    line: Some(secret.line),
                    column: Some(secret.column),
                }),
                hint: SECRET_HINT.to_owned(),
            });
        }
    }
    findings
}

/// CG012 and CG013: what one agent sees and the others do not, read off every agent's
/// layout (the agents that would not start here are left out by the caller) and the
/// `profiles`' [own rules files](Profile::own_rules_file).
pub fn cross_agent_findings(
    db: &dyn Db,
    ws: Workspace,
    profiles: &[&dyn Profile],
    layouts: &[Layout],
) -> Vec<Finding> {
    let root = ctxgraph_db::worktree::worktree(db, ws).root.clone();
    let mut sent: BTreeMap<PathBuf, Vec<&'static str>> = BTreeMap::new();
    for layout in layouts {
        for path in layout.sent_files().filter(|p| p.starts_with(&root)) {
            let agents = sent.entry(path.to_path_buf()).or_default();
            if !agents.contains(&layout.agent) {
                agents.push(layout.agent);
            }
        }
    }
    // A file another agent sends that a block inlines (Gemini's `@imports`): that agent sees
    // it too, and the inlining file shares its rules (`GEMINI.md` as `@./AGENTS.md`).
    let mut sharing = BTreeSet::new();
    for layout in layouts {
        for block in &layout.blocks {
            for inlined in &block.inlines {
                if let Some(agents) = sent.get_mut(inlined) {
                    if !agents.contains(&layout.agent) {
                        agents.push(layout.agent);
                    }
                    if let Some(path) = block.source.path() {
                        sharing.insert(path.to_path_buf());
                    }
                }
            }
        }
    }
    // Node's `readFile(p, "utf-8")`, as the agents read them: lossy, a byte order mark kept.
    let text = |path: &Path| -> String {
        file_bytes(db, db.files().get(db, path))
            .as_ref()
            .map(|bytes| ctxgraph_db::js::js_trim(&String::from_utf8_lossy(&bytes[..])).to_owned())
            .unwrap_or_default()
    };
    let mut findings = single_agent_rules(db, ws, &sent, &sharing, &text);
    // CG013: an agent's own rules file beside AGENTS.md or CLAUDE.md (CG002 covers AGENTS.md
    // and CLAUDE.md).
    let mut dirs: Vec<PathBuf> = sent.keys().filter_map(|p| p.parent().map(Path::to_path_buf)).collect();
    dirs.sort();
    dirs.dedup();
    for profile in profiles {
        let Some(own) = profile.own_rules_file() else { continue };
        for dir in &dirs {
            let own_file = dir.join(own.name);
            if !exists(db, &own_file) {
                continue;
            }
            for other in ["AGENTS.md", "CLAUDE.md"].map(|name| dir.join(name)) {
                if exists(db, &other) && !same_rules(db, &own_file, &other, &text) {
                    findings.push(Finding::about_file(
                        Code::AgentFilesDrift,
                        format!(
                            "{} and {} give different rules: {} reads {}, the other agents {}",
                            path::display(&own_file),
                            path::display(&other),
                            profile.title(),
                            own.name,
                            other.file_name().map(|n| n.to_string_lossy()).unwrap_or_default()
                        ),
                        &own_file,
                        own.hint,
                    ));
                }
            }
        }
    }
    findings
}

/// CG012: with two or more agents reading this repository, a file with text only one of them
/// sends and no other sent file repeats.
fn single_agent_rules(
    db: &dyn Db,
    ws: Workspace,
    sent: &BTreeMap<PathBuf, Vec<&'static str>>,
    sharing: &BTreeSet<PathBuf>,
    text: &dyn Fn(&Path) -> String,
) -> Vec<Finding> {
    let in_use: BTreeSet<&str> = sent.values().flatten().copied().collect();
    if in_use.len() < 2 {
        return Vec::new();
    }
    let texts: BTreeMap<&PathBuf, String> = sent.keys().map(|p| (p, text(p))).collect();
    // The files by text, so that "another file repeats it" is one lookup per file instead
    // of a comparison with every other sent file (hundreds in a monorepo, on each keystroke
    // of the language server).
    let mut by_text: HashMap<&str, Vec<&PathBuf>> = HashMap::new();
    for (path, text) in &texts {
        by_text.entry(text.as_str()).or_default().push(path);
    }
    let mut findings = Vec::new();
    for (path, agents) in sent {
        let [agent] = agents.as_slice() else { continue };
        let text = texts[path].as_str();
        let repeated = by_text[text].iter().any(|other| *other != path && !sent[*other].contains(agent));
        if repeated || sharing.contains(path) || text.is_empty() {
            continue;
        }
        let others: Vec<&str> = in_use.iter().copied().filter(|a| a != agent).collect();
        findings.push(Finding::about_file(
            Code::SingleAgentRule,
            format!(
                "{} is sent only by {agent}; {} never see it from {}",
                path::display(path),
                others.join(", "),
                path::display(ws.cwd(db))
            ),
            path,
            "give every agent the same rules: one AGENTS.md per directory (no AGENTS.override.md beside it), and GEMINI.md as `@./AGENTS.md` or Gemini's context.fileName set to AGENTS.md",
        ));
    }
    findings
}

fn exists(db: &dyn Db, path: &Path) -> bool {
    db.files().get(db, path).kind(db) == ctxgraph_db::system::FileKind::File
}

/// The same text, a symlink to the same file, or a file that is nothing but an import of the
/// other (`@AGENTS.md`, `@./AGENTS.md`).
fn same_rules(db: &dyn Db, a: &Path, b: &Path, text: &dyn Fn(&Path) -> String) -> bool {
    if ctxgraph_db::files::real_path(db, a) == ctxgraph_db::files::real_path(db, b) {
        return true;
    }
    let (ta, tb) = (text(a), text(b));
    let imports = |t: &str, from: &Path, to: &Path| {
        t.strip_prefix('@')
            .filter(|p| !p.contains(char::is_whitespace))
            .is_some_and(|p| path::resolve(from.parent().unwrap_or(Path::new("/")), p) == to)
    };
    ta == tb || imports(&ta, a, b) || imports(&tb, b, a)
}
