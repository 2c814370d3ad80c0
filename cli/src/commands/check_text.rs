//! `ctxgraph check`'s report as text: one line per scenario and, for each failure, why and
//! the diff. Shared by the text format and GitHub's log groups (github.rs).

use std::fmt::Write as _;

use anstyle::{AnsiColor, Style};
use ctxgraph_check::{Change, CheckReport, Project, Status};

use crate::error::render_engine;

#[derive(Clone, Copy)]
pub struct Paint {
    pub on: bool,
}

impl Paint {
    fn paint(self, style: Style, text: &str) -> String {
        if self.on { format!("{}{text}{}", style.render(), style.render_reset()) } else { text.to_owned() }
    }
}

const RED: Style = AnsiColor::Red.on_default();
const GREEN: Style = AnsiColor::Green.on_default();
const CYAN: Style = AnsiColor::Cyan.on_default();
const BOLD: Style = Style::new().bold();

/// `+312 tokens`, `-4 tokens`, `±0 tokens`.
pub fn token_delta(change: &Change) -> String {
    match change.token_delta() {
        0 => "±0 tokens".to_owned(),
        d => format!("{d:+} tokens"),
    }
}

/// One line per scenario; for each failure, why (the sources) and the diff.
pub fn text(project: &Project, report: &CheckReport, ci: bool, paint: Paint) -> String {
    let mut out = String::new();
    let width = report.scenarios.iter().map(|s| s.name.len()).max().unwrap_or(0);
    for s in &report.scenarios {
        let tokens = s.tokens.map(|t| format!("{t} tokens")).unwrap_or_default();
        let (label, style, detail) = match s.status {
            Status::Match => ("ok", GREEN, tokens),
            Status::Changed => (
                "CHANGED",
                RED,
                match &s.change {
                    Some(c) => format!("{} ({} → {})", token_delta(c), c.tokens_before, c.tokens_after),
                    None => "the snapshot file was edited".to_owned(),
                },
            ),
            Status::Missing if s.failed => ("MISSING", RED, format!("no snapshot ({tokens})")),
            Status::Missing => ("new", CYAN, format!("no snapshot yet ({tokens})")),
            Status::Invalid => ("INVALID", RED, s.snapshot.clone()),
            Status::Error => ("ERROR", RED, "cannot be built".to_owned()),
        };
        let _ = writeln!(out, "{} {:width$}  {detail}", paint.paint(style, &format!("{label:8}")), s.name);
        if let Some(note) = &s.note {
            let _ = writeln!(out, "  note: {note}");
        }
        if let Some(error) = &s.engine_error {
            let rendered = render_engine(error);
            let rendered =
                if paint.on { rendered } else { anstream::adapter::strip_str(&rendered).to_string() };
            for line in rendered.lines() {
                let _ = writeln!(out, "  {line}");
            }
        }
        if let Some(change) = &s.change {
            write_change(&mut out, change, paint);
        }
        if let Some(pending) = &s.pending {
            let _ = writeln!(out, "  wrote {pending}");
        }
    }
    summary(&mut out, project, report, ci);
    out
}

fn write_change(out: &mut String, change: &Change, paint: Paint) {
    if !change.sources.is_empty() {
        out.push_str("  why:\n");
        for source in &change.sources {
            let _ = writeln!(out, "    {:8} {}", source.kind.as_str(), source.source);
            if let Some(reason) = &source.reason {
                let _ = writeln!(out, "             {reason}");
            }
        }
    }
    out.push('\n');
    for line in change.diff.lines() {
        let style = if line.starts_with("+++") || line.starts_with("---") {
            BOLD
        } else if line.starts_with('+') {
            GREEN
        } else if line.starts_with('-') {
            RED
        } else if line.starts_with("@@") {
            CYAN
        } else {
            Style::new()
        };
        let _ = writeln!(out, "{}", paint.paint(style, line));
    }
    out.push('\n');
}

fn summary(out: &mut String, project: &Project, report: &CheckReport, ci: bool) {
    let total = report.scenarios.len();
    let failed: Vec<&str> = report.scenarios.iter().filter(|s| s.failed).map(|s| s.name.as_str()).collect();
    let file = project.relative(&project.file);
    let new = report.scenarios.iter().filter(|s| s.status == Status::Missing && !s.failed).count();
    if failed.is_empty() && new == 0 {
        let verb = if total == 1 { "matches its snapshot" } else { "match their snapshots" };
        let _ = writeln!(out, "\n{total} scenario{} of {file} {verb}", plural(total));
    } else if failed.is_empty() {
        let _ = writeln!(
            out,
            "\n{} of {total} scenario{} of {file} match; {new} ha{} no snapshot yet",
            total - new,
            plural(total),
            if new == 1 { "s" } else { "ve" }
        );
    } else {
        let _ = writeln!(
            out,
            "\n{} of {total} scenario{} of {file} failed: {}",
            failed.len(),
            plural(total),
            failed.join(", ")
        );
    }
    if report.scenarios.iter().any(|s| s.pending.is_some()) {
        out.push_str("review the diffs, then accept the new results with: ctxgraph check --accept\n");
    } else if ci
        && report.scenarios.iter().any(|s| s.failed && matches!(s.status, Status::Changed | Status::Missing))
    {
        let _ = writeln!(
            out,
            "if the change is intended, run `ctxgraph snapshot {}` and commit the snapshots",
            failed.join(" ")
        );
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
