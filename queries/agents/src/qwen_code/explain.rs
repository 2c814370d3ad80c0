//! Why a file is, or is not, in Qwen Code's context: read off [`QwenContext`]'s facts and
//! the rules of discovery (QW1–QW11).

use std::path::{Component, Path, PathBuf};

use crate::gemini::imports::{Import, MAX_DEPTH, Outcome};
use ctxgraph_db::agent::Agent;
use ctxgraph_db::profile::{AgentFate, Status};

use super::{LOCAL_NAME, OUTPUT_LANGUAGE_NAME, QWEN_DIR, QwenContext, RuleFate};

/// Where the context files and the rules without `paths:` go (QW6), in a few words.
pub const SYSTEM_MESSAGE: &str = "system message, after Qwen's own prompt";
/// Where a `paths:` rule goes (QW10), in a few words.
pub const READ_RESULT: &str = "the read_file result";

/// `path`'s fate in Qwen's start-up context and on reads. `qwen_dir` is Qwen's own folder,
/// `home` the home directory.
pub fn file_fate(ctx: &QwenContext, qwen_dir: &Path, home: &Path, path: &Path) -> AgentFate {
    let agent = Agent::QwenCode.name();
    if let Some(doc) = ctx.docs.iter().find(|d| d.source == path) {
        let status = if doc.is_sent() { Status::Sent } else { Status::NotSent };
        let placement = doc.is_sent().then_some(SYSTEM_MESSAGE);
        return AgentFate { agent, status, placement, rule: doc.rule(), reason: doc.reason() };
    }
    if let Some(rule) = ctx.rules.iter().find(|r| r.source == path) {
        let (status, placement) = match rule.fate {
            RuleFate::Sent => (Status::Sent, Some(SYSTEM_MESSAGE)),
            RuleFate::OnRead => (Status::OnRead, Some(READ_RESULT)),
            RuleFate::Empty | RuleFate::Unreadable { .. } => (Status::NotSent, None),
        };
        return AgentFate { agent, status, placement, rule: rule.rule(), reason: rule.reason() };
    }
    // An import of a context file: inlined, or why not.
    let imported: Vec<_> = ctx
        .docs
        .iter()
        .flat_map(|d| d.imports.iter().map(move |i| (d, i)))
        .filter(|(_, i)| i.resolved == path)
        .collect();
    if let Some((doc, import)) = imported.iter().find(|(doc, i)| i.is_inlined() && doc.is_sent()) {
        let through = if import.importer == doc.source {
            String::new()
        } else {
            format!(" written in {}, which it imports", import.importer.display())
        };
        return AgentFate {
            agent,
            status: Status::Inlined,
            placement: Some(SYSTEM_MESSAGE),
            rule: if doc.format == crate::gemini::ImportFormat::Flat { "QW8" } else { "QW7" },
            reason: format!(
                "inlined into {} by `@{}`{through} (QW7{})",
                doc.source.display(),
                import.path,
                if doc.format == crate::gemini::ImportFormat::Flat { ", QW8" } else { "" }
            ),
        };
    }
    if let Some((_, import)) = imported.first() {
        return ctxgraph_db::profile::not_sent(Agent::QwenCode, import_rule(import), import_reason(import));
    }
    not_found(ctx, qwen_dir, home, path)
}

/// The rule id behind an import's outcome.
pub fn import_rule(import: &Import) -> &'static str {
    match import.outcome {
        Outcome::Inlined => "QW5",
        Outcome::Skipped => "QW8",
        _ => "QW7",
    }
}

/// Why an `@import` is not inlined, naming where it is written (QW5, QW7, QW8).
pub fn import_reason(import: &Import) -> String {
    let why = match &import.outcome {
        Outcome::Inlined => "its importer has no text of its own and is left out (QW5)".to_owned(),
        Outcome::InCode => {
            "the `@` is in code as Qwen's Markdown reader sees it (a code block, or a code span), so it is not an import (QW7)"
                .to_owned()
        }
        Outcome::OutsideProject { root } => format!(
            "the path leaves {}, the git root seen from the importing file's folder (or is a URL), so it is not inlined (QW7)",
            root.display()
        ),
        Outcome::AlreadyProcessed => {
            "the file is already being inlined further up the same chain (the context file itself counts): an import cycle (QW7)"
                .to_owned()
        }
        Outcome::Failed { message } => format!("the import failed: {message} (QW7)"),
        Outcome::Missing => "no such file: the `@path` stays in the text as written (QW7)".to_owned(),
        Outcome::Skipped => "flat format: already listed, missing or unreadable, skipped silently (QW8)".to_owned(),
        Outcome::DepthLimit => format!(
            "imports nest at most {MAX_DEPTH} deep; this one is written in a file at the limit and left as text (QW7)"
        ),
    };
    format!("`@{}` in {}: {why}", import.path, import.importer.display())
}

/// The folder the walk starts from (QW1): the one above the git root, else the one that
/// holds the home directory.
pub fn walk_start(ctx: &QwenContext, home: &Path) -> PathBuf {
    match &ctx.git_root {
        Some(root) => root.parent().unwrap_or(root).to_path_buf(),
        None => home.parent().unwrap_or(home).to_path_buf(),
    }
}

/// Whether `path` lies below a `.qwen/rules` folder.
fn in_a_rules_folder(path: &Path) -> bool {
    let parts: Vec<Component<'_>> = path.components().collect();
    parts.windows(2).any(|w| w[0].as_os_str() == QWEN_DIR && w[1].as_os_str() == "rules")
}

/// Why discovery never meets `path`.
fn not_found(ctx: &QwenContext, qwen_dir: &Path, home: &Path, path: &Path) -> AgentFate {
    let agent = Agent::QwenCode.name();
    let not_sent =
        |rule, reason: String| AgentFate { agent, status: Status::NotSent, placement: None, rule, reason };
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let dir = path.parent().unwrap_or(Path::new("/"));
    let project_rules = ctx.root.join(QWEN_DIR).join("rules");
    if path.starts_with(qwen_dir.join("rules")) || path.starts_with(&project_rules) {
        return not_sent("QW9", 
            "in a rules folder, but not a rule: Qwen reads only regular `.md` files there and follows no symlink (QW9)"
                .to_owned(),
        );
    }
    if in_a_rules_folder(path) {
        return not_sent(
            "QW9",
            format!(
                "a .qwen/rules folder Qwen does not read: only {} and {} (QW9)",
                qwen_dir.join("rules").display(),
                project_rules.display()
            ),
        );
    }
    let names = ctx.settings.filenames.join(", ");
    if name == LOCAL_NAME {
        return not_sent(
            "QW4",
            match &ctx.git_root {
                Some(root) => format!(
                    "Qwen reads only the git root's {} (QW4)",
                    root.join(QWEN_DIR).join(LOCAL_NAME).display()
                ),
                None => "Qwen reads .qwen/QWEN.local.md only at a git root, and there is none here (QW4)"
                    .to_owned(),
            },
        );
    }
    if name == OUTPUT_LANGUAGE_NAME {
        return not_sent(
            "QW3",
            format!(
                "Qwen reads the working directory's .qwen/{OUTPUT_LANGUAGE_NAME} when there is one, else {} (QW3)",
                qwen_dir.join(OUTPUT_LANGUAGE_NAME).display()
            ),
        );
    }
    if !ctx.settings.filenames.contains(&name) {
        let never = ["GEMINI.md", "CLAUDE.md"].contains(&name.as_str());
        return not_sent(
            if never { "QW11" } else { "QW2" },
            if never {
                format!("Qwen never reads {name}: it looks for {names} (QW2, QW11)")
            } else {
                format!("not a context file name: Qwen looks for {names} (QW1, QW2)")
            },
        );
    }
    if dir == qwen_dir {
        return not_sent(
            "QW1",
            format!("Qwen looks for {name} in its own folder first, but no readable file is there (QW1)"),
        );
    }
    if ctx.cwd == home {
        return not_sent(
            "QW1",
            format!(
                "started in the home directory, Qwen looks only at {} and {} (QW1)",
                qwen_dir.join(&name).display(),
                home.join(&name).display()
            ),
        );
    }
    let start = walk_start(ctx, home);
    if path.starts_with(&ctx.cwd) {
        return not_sent("QW11", 
            "below the working directory: Qwen sends no context file from there, not at start-up nor on a read (QW1, QW11)"
                .to_owned(),
        );
    }
    if ctx.cwd.starts_with(dir) && dir.starts_with(&start) && dir.parent().is_some() {
        return not_sent(
            "QW1",
            format!(
                "on the walk from {} to the working directory, but no readable file is there (QW1)",
                start.display()
            ),
        );
    }
    if ctx.cwd.starts_with(dir) {
        return not_sent(
            "QW1",
            format!(
                "above {}, where the walk starts: the folder above the git root, or the one holding the home directory without one; the filesystem root is never read (QW1)",
                start.display()
            ),
        );
    }
    not_sent(
        "QW1",
        format!(
            "beside the path from {} to the working directory: Qwen walks only that path (QW1)",
            start.display()
        ),
    )
}
