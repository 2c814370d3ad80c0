//! Why every rule file is, or is not, in the system prompt.
//!
//! Built only from the facts discovery returns ([`SystemPaths`], its probes and expansions,
//! [`Nearby`]) and from the same queries discovery calls (`find_up`, `glob`, `rule_text`)
//! for the names and directories discovery did not need to look at. Nothing here decides
//! what opencode loads; it reports what the queries decided.
//!
//! `model` (and `session_model` for a session) is what an explanation says, `prose` says it
//! in words, `explainer` (and `session`) reads it off the facts.
//!
//! [`SystemPaths`]: crate::instructions::SystemPaths
//! [`Nearby`]: crate::nearby::Nearby

mod explainer;
mod model;
mod prose;
mod session;
mod session_model;

use std::path::Path;

use crate::prompt::BuildError;
use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::tokens::TokenCounter;

use explainer::Explainer;
pub use model::{
    EntryExpansion, EntryReport, Explanation, Item, LevelReport, Loaded, NearMiss, Reason, RemoteStatus,
    Size, Source, Stage, Target, TargetExplanation, Via,
};
pub use session::explain_session;
pub use session_model::{
    Compacts, EarlierLoad, Fate, Lapse, MessageFate, NextStep, ReadExplanation, RuleExplanation,
    SessionExplanation,
};

/// Explains every candidate discovery considered from `ws`.
pub fn explain(db: &dyn Db, ws: Workspace, counter: &dyn TokenCounter) -> Result<Explanation, BuildError> {
    Explainer::new(db, ws, counter)?.explanation()
}

/// [`explain`] without the rule files below the working directory that only a read
/// attaches (N3): what opencode looks at when it starts, without walking the tree below
/// the working directory.
pub fn explain_startup(
    db: &dyn Db,
    ws: Workspace,
    counter: &dyn TokenCounter,
) -> Result<Explanation, BuildError> {
    Explainer::new(db, ws, counter)?.explanation_of(false)
}

/// Explains one file, `instructions` entry or URL. A relative path is taken relative to
/// `base` (the caller's current directory).
pub fn explain_target(
    db: &dyn Db,
    ws: Workspace,
    counter: &dyn TokenCounter,
    target: &str,
    base: &Path,
) -> Result<TargetExplanation, BuildError> {
    let explainer = Explainer::new(db, ws, counter)?;
    let all = explainer.explanation()?;
    let entries: Vec<EntryReport> = all.entries.iter().filter(|e| e.entry == target).cloned().collect();
    if !entries.is_empty() || target.starts_with("https://") || target.starts_with("http://") {
        let items = all
            .items
            .iter()
            .filter(|item| match &item.via {
                Some(Via::Instruction { entry, .. }) => entry == target,
                Some(Via::Remote { .. }) => item.source == Source::Url(target.to_owned()),
                _ => false,
            })
            .cloned()
            .collect();
        return Ok(TargetExplanation { target: Target::Entry(target.to_owned()), items, entries });
    }
    let path = explainer.resolve_target(Path::new(target), base);
    let mut items: Vec<Item> =
        all.items.iter().filter(|item| item.source == Source::File(path.clone())).cloned().collect();
    if items.is_empty() {
        items.push(explainer.stray(&path)?);
    }
    Ok(TargetExplanation { target: Target::File(path), items, entries: Vec::new() })
}
