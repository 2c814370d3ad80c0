//! Why a file is, or is not, in Gemini CLI's context: read off [`GeminiContext`]'s facts and
//! the rules of discovery (GM1–GM8).

use std::path::Path;

use ctxgraph_db::profile::{AgentFate, Status};

use super::{Fate, GEMINI_DIR, GeminiContext, Import, Outcome, Scope};

/// `path`'s fate in Gemini's start-up context and on reads. `home` is Gemini's home directory.
pub fn file_fate(ctx: &GeminiContext, home: &Path, path: &Path) -> AgentFate {
    let agent = "gemini";
    if let Some(doc) = ctx.docs.iter().find(|d| d.source == path) {
        let status = match doc.fate {
            Fate::Included => Status::Sent,
            Fate::Empty | Fate::Unreadable { .. } => Status::NotSent,
        };
        let placement = doc.is_sent().then(|| doc.scope.placement());
        return AgentFate { agent, status, placement, rule: doc.rule(), reason: doc.reason() };
    }
    // An import of a context file: inlined, or why not.
    let imported: Vec<_> = ctx
        .docs
        .iter()
        .flat_map(|d| d.imports.iter().map(move |i| (d, i)))
        .filter(|(_, i)| i.resolved == path)
        .collect();
    if let Some((doc, import)) = imported.iter().find(|(doc, i)| i.is_inlined() && doc.is_sent()) {
        return AgentFate {
            agent,
            status: Status::Inlined,
            placement: Some(doc.scope.placement()),
            rule: "GM4",
            reason: if import.importer == doc.source {
                format!("inlined into {} by its `@{}` (GM4)", doc.source.display(), import.path)
            } else {
                format!(
                    "inlined into {} by `@{}` written in {}, which it imports (GM4)",
                    doc.source.display(),
                    import.path,
                    import.importer.display()
                )
            },
        };
    }
    if let Some((_, import)) = imported.first() {
        return ctxgraph_db::profile::not_sent(
            ctxgraph_db::agent::Agent::Gemini,
            import_rule(import),
            import_reason(import),
        );
    }
    not_found(ctx, home, path)
}

/// Why discovery never meets `path`.
fn not_found(ctx: &GeminiContext, home: &Path, path: &Path) -> AgentFate {
    let agent = "gemini";
    let dir = path.parent().unwrap_or(Path::new("/"));
    let names = ctx.settings.filenames.join(", ");
    let is_context_name =
        ctx.settings.filenames.iter().any(|name| ctxgraph_db::path::resolve(dir, name) == path);
    let not_sent =
        |rule, reason: String| AgentFate { agent, status: Status::NotSent, placement: None, rule, reason };
    if dir == home.join(GEMINI_DIR) || !is_context_name {
        return not_sent("GM6", format!("not a context file name: Gemini looks for {names} (GM6)"));
    }
    if path.starts_with(&ctx.cwd) {
        return AgentFate {
            agent,
            status: Status::OnRead,
            placement: Some(Scope::Read.placement()),
            rule: "GM8",
            reason: format!(
                "below the working directory: not loaded at start-up, attached to the result when the model reads a file under {} (GM8)",
                dir.display()
            ),
        };
    }
    if ctx.cwd.starts_with(dir) {
        return not_sent(
            "GM2",
            format!(
                "above {}, where the upward search stops: the project root, or the working directory when no boundary marker ({}) is found (GM2)",
                ctx.ceiling.display(),
                ctx.settings.boundary_markers.join(", ")
            ),
        );
    }
    not_sent(
        "GM2",
        format!(
            "beside the path from {} to the working directory: Gemini only searches upward (GM2)",
            ctx.ceiling.display()
        ),
    )
}

/// The rule [`import_reason`] cites: GM7 for an importer left out, GM4 otherwise.
pub fn import_rule(import: &Import) -> &'static str {
    match import.outcome {
        Outcome::Inlined => "GM7",
        _ => "GM4",
    }
}

/// Why an `@import` is not inlined, naming where it is written (GM4, GM7).
pub fn import_reason(import: &Import) -> String {
    let why = match &import.outcome {
        Outcome::Inlined => "its importer has no text of its own and is left out (GM7)".to_owned(),
        Outcome::InCode => "the `@` is inside a backtick span, so it is not an import (GM4)".to_owned(),
        Outcome::OutsideProject { root } => format!(
            "the path leaves the project root {} (or is a URL), so Gemini writes \"Path traversal attempt\" instead (GM4)",
            root.display()
        ),
        Outcome::AlreadyProcessed => {
            "the file is already being inlined further up the same chain: an import cycle (GM4)".to_owned()
        }
        Outcome::Failed { message } => format!("the import failed: {message} (GM4)"),
        Outcome::Missing => "no such file: the `@path` stays as written (GM4)".to_owned(),
        Outcome::Skipped => "flat format: already listed, or unreadable (GM4)".to_owned(),
        Outcome::DepthLimit => format!(
            "imports nest at most {} deep; this one is written in a file at the limit and left as text (GM4)",
            super::imports::MAX_DEPTH
        ),
    };
    format!("`@{}` in {}: {why}", import.path, import.importer.display())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::gemini::gemini_context;
    use ctxgraph_db::db::{Host, Workspace};
    use ctxgraph_db::system::MemorySystem;
    use ctxgraph_db::testing::TestDb;

    /// Each file's status and its rule (which its reason cites), from `/r/a/b`.
    fn fates(files: &[&str]) -> Vec<(String, Status, String)> {
        let fs = MemorySystem::new();
        fs.init_git_repo("/r");
        fs.write_file("/h/.gemini/GEMINI.md", "global\n");
        fs.write_file("/r/GEMINI.md", "root\n@docs/in.md\n@../out.md\n`@docs/code.md`\n@gone.md\n");
        fs.write_file("/r/docs/in.md", "imported\n");
        fs.write_file("/r/a/b/GEMINI.md", "\n");
        fs.write_file("/r/a/b/c/GEMINI.md", "below\n");
        fs.write_file("/r/x/GEMINI.md", "beside\n");
        let db = TestDb::new(fs);
        let host = Host::new(&db, BTreeMap::default(), "/h".into(), "linux".into(), String::new());
        let ws = Workspace::new(&db, host, "/r/a/b".into());
        let ctx = gemini_context(&db, ws).as_ref().expect("context");
        files
            .iter()
            .map(|f| {
                let fate = file_fate(ctx, Path::new("/h"), Path::new(f));
                assert!(fate.reason.contains(fate.rule), "{f}: {} does not cite {}", fate.reason, fate.rule);
                ((*f).to_owned(), fate.status, fate.rule.to_owned())
            })
            .collect()
    }

    #[test]
    fn every_file_gets_its_verdict_and_rule() {
        use Status::{Inlined, NotSent, OnRead, Sent};
        let got = fates(&[
            "/h/.gemini/GEMINI.md",
            "/r/GEMINI.md",
            "/r/docs/in.md",
            "/out.md",
            "/r/gone.md",
            "/r/a/b/GEMINI.md",
            "/r/a/b/c/GEMINI.md",
            "/r/x/GEMINI.md",
            "/r/AGENTS.md",
            "/GEMINI.md",
        ]);
        let want = [
            ("/h/.gemini/GEMINI.md", Sent, "GM1"),
            ("/r/GEMINI.md", Sent, "GM2"),
            ("/r/docs/in.md", Inlined, "GM4"),
            ("/out.md", NotSent, "GM4"),
            ("/r/gone.md", NotSent, "GM4"),
            ("/r/a/b/GEMINI.md", NotSent, "GM7"),
            ("/r/a/b/c/GEMINI.md", OnRead, "GM8"),
            ("/r/x/GEMINI.md", NotSent, "GM2"),
            ("/r/AGENTS.md", NotSent, "GM6"),
            ("/GEMINI.md", NotSent, "GM2"),
        ];
        let want: Vec<(String, Status, String)> =
            want.iter().map(|(f, s, r)| ((*f).to_owned(), *s, (*r).to_owned())).collect();
        assert_eq!(got, want);
    }
}
