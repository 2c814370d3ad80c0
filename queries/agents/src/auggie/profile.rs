//! The Auggie profile's answers in the shared shape ([`ctxgraph_db::profile`]). The text is
//! not a model prompt: it is the rule-bearing fields of Auggie's `chat-stream` request to
//! Augment's server, as JSON in the request's order (AU1), from which that server builds the
//! prompt. Its own rule (AU7) comes with the request as a [`Prose`].

use std::borrow::Cow;
use std::path::Path;

use ctxgraph_db::agent::Agent;
use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::lint::{Budget, Finding};
use ctxgraph_db::profile::{
    About, AgentFate, Frame, Layout, LayoutBuilder, LeftOut, Part, Placement, Profile, ProfileError,
    ReadLayout, Request, Source, Status,
};
use ctxgraph_db::tokens::TokenCounter;

use super::prose::RULE_PATH;
use super::{AuggieContext, Kind, Prose, auggie_context};

/// Auggie 0.36.0.
pub struct Auggie;

const ABOUT: About = About {
    agent: Agent::Auggie,
    title: "Auggie",
    release: "auggie-0.36.0",
    doc: "docs/profiles/auggie.md",
    files: &["AGENTS.md", "CLAUDE.md", ".augment/rules/**", ".augment/skills/**", ".augment-guidelines"],
};

/// Where the fields go.
const POSITION: &str = "a field of Auggie's chat-stream request to Augment's server (not a model prompt; the server builds that)";

fn prose(request: &Request) -> Cow<'_, Prose> {
    request.wording::<Prose>().map_or_else(
        || Cow::Owned(Prose::unavailable("Auggie's installation was not looked for")),
        Cow::Borrowed,
    )
}

/// A JSON string literal.
fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

/// Writes the fields as `json.dumps(…, indent=2)` lays them out, noting where each string
/// value that carries a file (or Auggie's own rule) starts.
struct Writer {
    text: String,
    /// (start of the escaped value, its escaped text, what it is).
    values: Vec<(usize, String, Source, &'static str, String)>,
}

impl Writer {
    fn object(
        &mut self,
        indent: &str,
        fields: &[(&str, String)],
        carried: Option<(&str, Source, &'static str, String)>,
    ) {
        self.text.push_str(indent);
        self.text.push_str("{\n");
        for (i, (key, value)) in fields.iter().enumerate() {
            self.text.push_str(indent);
            self.text.push_str("  ");
            self.text.push_str(&quoted(key));
            self.text.push_str(": ");
            if let Some((field, source, rule, reason)) = &carried
                && field == key
            {
                let inner = value[1..value.len() - 1].to_owned();
                self.values.push((self.text.len() + 1, inner, source.clone(), rule, reason.clone()));
            }
            self.text.push_str(value);
            self.text.push_str(if i + 1 < fields.len() { ",\n" } else { "\n" });
        }
        self.text.push_str(indent);
        self.text.push('}');
    }

    fn list<T>(&mut self, items: &[T], mut item: impl FnMut(&mut Writer, &T)) {
        if items.is_empty() {
            self.text.push_str("[]");
            return;
        }
        self.text.push_str("[\n");
        for (i, it) in items.iter().enumerate() {
            item(self, it);
            self.text.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
        }
        self.text.push_str("  ]");
    }
}

/// AU1: the four fields, in the request's order.
fn fields(ctx: &AuggieContext, prose: &Prose) -> Writer {
    let mut w = Writer { text: String::new(), values: Vec::new() };
    let guidelines = ctx.guidelines.as_ref().map_or("", |(_, text)| text.as_str());
    w.text.push_str("{\n  \"user_guidelines\": \"\",\n  \"workspace_guidelines\": ");
    if let Some((path, _)) = &ctx.guidelines {
        let escaped = quoted(guidelines);
        w.values.push((
            w.text.len() + 1,
            escaped[1..escaped.len() - 1].to_owned(),
            Source::File(path.clone()),
            "AU5",
            "the workspace root's .augment-guidelines, sent as workspace_guidelines (AU5)".to_owned(),
        ));
    }
    w.text.push_str(&quoted(guidelines));
    w.text.push_str(",\n  \"rules\": ");
    let sent: Vec<_> = ctx.rules.iter().filter(|r| r.sent()).collect();
    let mut items: Vec<Option<&super::Rule>> = vec![None];
    items.extend(sent.into_iter().map(Some));
    w.list(&items, |w, rule| match rule {
        None => w.object(
            "    ",
            &[
                ("path", quoted(RULE_PATH)),
                ("content", quoted(&prose.non_interactive)),
                ("type", "0".to_owned()),
            ],
            Some((
                "content",
                Source::Agent("Auggie's non-interactive rule".to_owned()),
                "AU7",
                "Auggie's own rule for a run with no user to ask, first in rules (AU7)".to_owned(),
            )),
        ),
        Some(rule) => {
            let mut fields = vec![
                ("path", quoted(&rule.path)),
                ("content", quoted(&rule.content)),
                ("type", rule.rule_type.number().to_string()),
                ("description", rule.description.as_deref().map_or("null".to_owned(), quoted)),
                ("settingsStored", (rule.kind == Kind::AgentFile).to_string()),
            ];
            if rule.kind == Kind::User {
                fields.push(("source", quoted("user")));
            }
            w.object(
                "    ",
                &fields,
                Some(("content", Source::File(rule.source.clone()), rule.rule(), rule.reason())),
            );
        }
    });
    w.text.push_str(",\n  \"skills\": ");
    let skills: Vec<_> = ctx.skills.iter().filter(|s| s.description.is_some()).collect();
    w.list(&skills, |w, skill| {
        w.object(
            "    ",
            &[
                ("name", quoted(&skill.name)),
                ("displayName", "null".to_owned()),
                ("description", quoted(skill.description.as_deref().unwrap_or_default())),
                ("location", quoted(&skill.location.to_string_lossy())),
                ("source", quoted(skill.source)),
            ],
            Some((
                "location",
                Source::File(skill.location.clone()),
                "AU6",
                "a skill: its name, description and location go in the request's skills, not its body (AU6)"
                    .to_owned(),
            )),
        );
    });
    w.text.push_str("\n}");
    w
}

impl Profile for Auggie {
    fn about(&self) -> &'static About {
        &ABOUT
    }

    fn attaches_on_read(&self) -> bool {
        false
    }

    fn fingerprints(&self) -> Option<std::sync::Arc<dyn std::any::Any + Send + Sync>> {
        Some(std::sync::Arc::new(Prose::fingerprints()))
    }

    fn layout(&self, db: &dyn Db, ws: Workspace, request: &Request) -> Result<Layout, ProfileError> {
        let ctx = auggie_context(db, ws);
        let prose = prose(request);
        let w = fields(ctx, &prose);
        let mut builder = LayoutBuilder::new(w.text.clone());
        for (start, text, source, rule, reason) in &w.values {
            builder.block_at(
                *start,
                Part {
                    source: source.clone(),
                    placement: Placement::SystemMessage,
                    position: POSITION,
                    text,
                    status: Status::Sent,
                    rule,
                    reason: reason.clone(),
                    inlines: Vec::new(),
                },
            );
        }
        let left_out = ctx
            .rules
            .iter()
            .filter(|r| !r.sent())
            .map(|r| LeftOut { source: r.source.clone(), fate: "manual", rule: r.rule(), reason: r.reason() })
            .chain(ctx.skills.iter().filter(|s| s.description.is_none()).map(|s| LeftOut {
                source: s.location.clone(),
                fate: "no_description",
                rule: "AU6",
                reason: "left out: a skill without a description is not sent (AU6)".to_owned(),
            }))
            .collect();
        let frame = Frame {
            cwd: ws.cwd(db).clone(),
            root: Some(ctx.root.clone()),
            left_out,
            settings: Vec::new(),
            wording: crate::claude_code::profile::wording_source(&prose.source),
        };
        Ok(frame.layout(self, builder))
    }

    fn read(
        &self,
        _: &dyn Db,
        _: Workspace,
        _: &Path,
        _: &Request,
    ) -> Option<Result<ReadLayout, ProfileError>> {
        // Not observed: the fake server cannot ask for a tool call; ctxgraph models none.
        None
    }

    fn fate(&self, db: &dyn Db, ws: Workspace, _: &dyn TokenCounter, file: &Path) -> AgentFate {
        let ctx = auggie_context(db, ws);
        if let Some(rule) = ctx.rules.iter().find(|r| r.source == file) {
            let status = if rule.sent() { Status::Sent } else { Status::NotSent };
            return AgentFate {
                agent: self.agent().name(),
                status,
                placement: (status == Status::Sent)
                    .then_some("the rules field of Auggie's chat-stream request"),
                rule: rule.rule(),
                reason: rule.reason(),
            };
        }
        if ctx.guidelines.as_ref().is_some_and(|(p, _)| p == file) {
            return AgentFate {
                agent: self.agent().name(),
                status: Status::Sent,
                placement: Some("the workspace_guidelines field of Auggie's chat-stream request"),
                rule: "AU5",
                reason: "the workspace root's .augment-guidelines (AU5)".to_owned(),
            };
        }
        ctxgraph_db::profile::not_sent(
            self.agent(),
            "AU1",
            format!(
                "not a file Auggie sends from {}: the root's AGENTS.md and CLAUDE.md, .augment/rules, ~/.augment/rules, .augment-guidelines and skills (AU1)",
                ctxgraph_db::path::display(&ctx.root)
            ),
        )
    }

    fn lint(
        &self,
        _: &dyn Db,
        _: Workspace,
        _: &dyn TokenCounter,
        _: Budget,
    ) -> Result<Vec<Finding>, ProfileError> {
        // No check of Auggie's own yet; `lint --agent all` includes it in CG012/CG013.
        Ok(Vec::new())
    }
}
