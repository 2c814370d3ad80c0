//! The prose of explanations: what a chain or a reason means, in words, and what to do.

use std::fmt::Write as _;

use ctxgraph_db::path;
use ctxgraph_db::remote::FetchFailure;

use super::model::{Reason, RemoteStatus, Via};
use super::session_model::{Compacts, EarlierLoad, Fate, Lapse};
use crate::session::compaction::{CompactionPlan, PlanParams};
use crate::session::reads::{Holder, RuleState};

impl Via {
    /// The rule [`Via::describe`] cites.
    pub fn rule(&self) -> &'static str {
        match self {
            Via::Global { .. } => "I3",
            Via::Project { .. } => "I4",
            Via::Instruction { .. } => "I5",
            Via::Remote { .. } => "I8",
        }
    }

    /// One sentence, for people.
    pub fn describe(&self) -> String {
        match self {
            Via::Global { tried } => match tried.as_slice() {
                [_] => "global rule (I3)".to_owned(),
                _ => format!(
                    "global rule (I3): the first of {} that exists",
                    tried.iter().map(|p| path::display(p)).collect::<Vec<_>>().join(", ")
                ),
            },
            Via::Project { name, names, level, dir } => {
                let place = match level {
                    0 => "in the working directory".to_owned(),
                    1 => "1 level above the working directory".to_owned(),
                    n => format!("{n} levels above the working directory"),
                };
                format!(
                    "project rule (I4): {name} is the first of {} found between the working directory and the worktree root; this one is {place} ({})",
                    names.join(", "),
                    path::display(dir)
                )
            }
            Via::Instruction { entry, config, line, dir, .. } => format!(
                "instructions entry {entry:?} (I5) from {}, matched in {}",
                at_line(config, *line),
                path::display(dir)
            ),
            Via::Remote { config, line, .. } => {
                format!("instructions URL (I8) from {}", at_line(config, *line))
            }
        }
    }
}

fn at_line(file: &str, line: Option<usize>) -> String {
    match line {
        Some(line) => format!("{file}:{line}"),
        None => file.to_owned(),
    }
}

impl Reason {
    /// A few words, for a graph node or a column.
    pub fn summary(&self) -> String {
        match self {
            Reason::Missing => "missing".to_owned(),
            Reason::Directory => "a directory".to_owned(),
            Reason::ShadowedGlobal { winner } => format!("shadowed by {}", path::display(winner)),
            Reason::ShadowedByCategory { winner, .. } => format!("shadowed: {winner} won"),
            Reason::DisabledByFlag { flag, value } | Reason::ProjectConfigDisabled { flag, value } => {
                format!("{flag}={value}")
            }
            Reason::OutsideWorktree { .. } => "above the worktree".to_owned(),
            Reason::OutsideWorkingDirectory { .. } => "outside the working directory".to_owned(),
            Reason::Empty => "empty".to_owned(),
            Reason::Unreadable { error } => format!("unreadable: {error}"),
            Reason::Duplicate { .. } => "duplicate".to_owned(),
            Reason::NoPatternMatched { .. } => "no pattern matches".to_owned(),
            Reason::NearbyOnly { .. } => "attached on read only".to_owned(),
            Reason::NearbyShadowed { winner } => format!("read tool takes {}", path::display(winner)),
            Reason::WalkFailed { path } => format!("walk failed at {}", path::display(path)),
            Reason::Remote { status: RemoteStatus::NotFetched } => "not fetched".to_owned(),
            Reason::Remote { status: RemoteStatus::Failed { reason } } => format!("fetch failed: {reason}"),
            Reason::Remote { status: RemoteStatus::Offline } => "offline, not cached".to_owned(),
            Reason::Remote { status: RemoteStatus::PinMismatch { reason } } => {
                format!("pin mismatch: {reason}")
            }
            Reason::Remote { status: RemoteStatus::Empty } => "empty document".to_owned(),
            Reason::Remote { status: RemoteStatus::Loaded } => "loaded".to_owned(),
        }
    }

    /// What happened, in plain words.
    pub fn describe(&self) -> String {
        match self {
            Reason::Missing => "there is no file at this path".to_owned(),
            Reason::Directory => "it is a directory; opencode reads it as empty".to_owned(),
            Reason::ShadowedGlobal { winner } => format!(
                "opencode loads only the first global rule that exists, and {} exists (I3)",
                path::display(winner)
            ),
            Reason::ShadowedByCategory { name, winner, winning_files } => format!(
                "opencode uses only one rule file name: the first of AGENTS.md, CLAUDE.md, CONTEXT.md that exists anywhere between the working directory and the worktree root. {winner} exists ({}), so every {name} on that walk is ignored, this one included (I4)",
                winning_files.iter().map(|p| path::display(p)).collect::<Vec<_>>().join(", ")
            ),
            Reason::DisabledByFlag { flag, value } => {
                format!("{flag}={value} is set, which turns CLAUDE.md files off (P7)")
            }
            Reason::ProjectConfigDisabled { flag, value } => {
                format!("{flag}={value} is set, so project rule files are not looked for (P7)")
            }
            Reason::OutsideWorktree { worktree } => format!(
                "it is above the worktree root {}, where opencode stops looking (P5)",
                path::display(worktree)
            ),
            Reason::OutsideWorkingDirectory { cwd } => format!(
                "opencode looks for rule files only in {} and the directories above it, and (when a file is read) below it; this one is elsewhere",
                path::display(cwd)
            ),
            Reason::Empty => "the file is empty, so it adds no block (I9)".to_owned(),
            Reason::Unreadable { error } => {
                format!("it cannot be read ({error}); opencode reads it as empty (I7)")
            }
            Reason::Duplicate { first } => format!(
                "this match adds nothing: the same path is already in the prompt as {} (I6)",
                first.describe()
            ),
            Reason::NoPatternMatched { nearest: None } => {
                "it is not a rule file name, and no `instructions` entry is configured to match it".to_owned()
            }
            Reason::NoPatternMatched { nearest: Some(near) } => format!(
                "it is not a rule file name, and no `instructions` entry matches it; the nearest is {:?} from {}, which does not match {:?} in {}",
                near.entry,
                at_line(&near.config, near.line),
                near.relative,
                path::display(&near.dir)
            ),
            Reason::NearbyOnly { dir } => format!(
                "it is below the working directory, so it is not in the system prompt: opencode's read tool attaches it once, when the model reads a file under {} (N3)",
                path::display(dir)
            ),
            Reason::NearbyShadowed { winner } => format!(
                "the read tool attaches one rule file per directory and {} comes first (N3)",
                path::display(winner)
            ),
            Reason::WalkFailed { path } => format!(
                "looking for this name failed at {} (not accessible), which opencode treats as not found (F2)",
                path::display(path)
            ),
            Reason::Remote { status: RemoteStatus::NotFetched } => {
                "URL, not fetched in this run, so opencode's copy is unknown".to_owned()
            }
            Reason::Remote { status: RemoteStatus::Failed { reason } } => {
                format!("fetching it failed ({reason}); {}", FetchFailure::OPENCODE_WHEN_FAILED)
            }
            Reason::Remote { status: RemoteStatus::Offline } => format!(
                "not fetched: this run was offline and no cached copy exists; {}",
                FetchFailure::OPENCODE_WHEN_OFFLINE
            ),
            Reason::Remote { status: RemoteStatus::PinMismatch { reason } } => format!(
                "its body does not match the URL's integrity pin ({reason}); {}",
                FetchFailure::OPENCODE_WHEN_PINNED
            ),
            Reason::Remote { status: RemoteStatus::Empty } => {
                "the fetched document is empty, so it adds no block (I9)".to_owned()
            }
            Reason::Remote { status: RemoteStatus::Loaded } => "it is loaded".to_owned(),
        }
    }

    /// What to do about it, when there is something to do.
    ///
    /// Hints that say "list it in `instructions`" pair with [`Item::load_with`](super::Item::load_with).
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            Reason::ShadowedByCategory { winner, .. } => {
                format!("rename it to {winner} or merge it into one, or list it in `instructions`")
            }
            Reason::ShadowedGlobal { winner } => {
                format!("merge it into {}, which opencode loads instead", path::display(winner))
            }
            Reason::DisabledByFlag { flag, .. } | Reason::ProjectConfigDisabled { flag, .. } => {
                format!("unset {flag}, or rename the file to AGENTS.md")
            }
            Reason::OutsideWorktree { .. } | Reason::OutsideWorkingDirectory { .. } => {
                "move it into the repository, or list it in `instructions`".to_owned()
            }
            Reason::Empty => "add content, or delete the file".to_owned(),
            Reason::Unreadable { .. } => "fix its permissions".to_owned(),
            Reason::NoPatternMatched { nearest: Some(near) } => {
                format!("fix the pattern {:?} so it matches {:?}", near.entry, near.relative)
            }
            Reason::NoPatternMatched { nearest: None } => "list it in `instructions` to load it".to_owned(),
            Reason::NearbyOnly { .. } => "to have it in every prompt, list it in `instructions`".to_owned(),
            Reason::NearbyShadowed { winner } => {
                format!("merge it into {}", path::display(winner))
            }
            Reason::WalkFailed { .. } => "fix the permissions or the symlink loop".to_owned(),
            Reason::Missing | Reason::Directory | Reason::Duplicate { .. } | Reason::Remote { .. } => {
                return None;
            }
        })
    }
}

/// N4.1's caveats on a session rule's verdict, in words (empty when there is none): the
/// reads opencode's own race may give it to, and the model's answer where the recorded
/// one differs.
pub(super) fn race_and_model(
    race: Option<&[Holder]>,
    unlisted: Option<usize>,
    computed: Option<&RuleState>,
) -> String {
    let mut out = String::new();
    if let Some(holders) = race {
        out.push_str("; which parallel read gets it is opencode's race (N4.1): any of ");
        // Written in place: a message of thousands of parallel reads words this for each.
        for (k, holder) in holders.iter().enumerate() {
            let sep = if k == 0 { "" } else { ", " };
            let _ = match &holder.part {
                Some(part) => write!(out, "{sep}{part} ({})", holder.file.display()),
                None => write!(out, "{sep}this read ({})", holder.file.display()),
            };
        }
        if let Some(more) = unlisted {
            let sep = if holders.is_empty() { "" } else { ", " };
            let _ = write!(out, "{sep}{more} more parallel reads");
        }
    }
    if let Some(computed) = computed {
        let (_, said) = session_rule(computed, None);
        let _ = write!(out, "; this is what the export records, ctxgraph's model said: {said}");
    }
    out
}

/// A rule file found by a read in a session: the rule id that decided it and the words.
pub(super) fn session_rule(state: &RuleState, earlier: Option<&EarlierLoad>) -> (&'static str, String) {
    match state {
        RuleState::Attached | RuleState::LoadedNotShown | RuleState::ReadFails => {
            let what = match state {
                RuleState::LoadedNotShown => (
                    "N6",
                    "loaded but not shown: an image or PDF read lists it in metadata.loaded without a \
                     reminder, so its text never reaches the model, and later reads count it as attached"
                        .to_owned(),
                ),
                RuleState::ReadFails => (
                    "N6",
                    "claimed, then lost: the read fails (a binary file), so nothing is shown or recorded \
                     and a later step attaches it again"
                        .to_owned(),
                ),
                _ => ("N5", "attached: its text is in this read's <system-reminder>".to_owned()),
            };
            match earlier {
                None => what,
                Some(earlier) => {
                    let lapse = match &earlier.lapse {
                        Lapse::Pruned => "its output was pruned (K11)".to_owned(),
                        Lapse::CompactedAway { by } => {
                            format!("the compaction {by} removed it from the history (K10)")
                        }
                        Lapse::Failed => "it failed, so it never completed (N6)".to_owned(),
                        Lapse::UserAttached => {
                            "this read is a file the user attached, which is read without history (N4)"
                                .to_owned()
                        }
                    };
                    (
                        "N7",
                        format!(
                            "{}; attached again although the read {} in {} attached it before: {lapse}",
                            what.1, earlier.part, earlier.message
                        ),
                    )
                }
            }
        }
        RuleState::IsTarget => ("N3", "not attached: it is the file being read".to_owned()),
        RuleState::InSystemPrompt => ("N3", "not attached: it is already in the system prompt".to_owned()),
        RuleState::AlreadyLoaded { by_part } => (
            "N2",
            format!("not attached: the completed read {by_part} earlier in the history already attached it"),
        ),
        RuleState::Claimed { by_part } => {
            ("N4", format!("not attached: the read {by_part} in the same assistant message claimed it first"))
        }
        RuleState::Empty => {
            ("N5", "claimed but empty: nothing is attached and metadata.loaded does not list it".to_owned())
        }
    }
}

/// Whether the next step compacts, in words.
pub(super) fn compacts(
    compacts: &Compacts,
    plan: &CompactionPlan,
    params: &PlanParams,
) -> (&'static str, String) {
    match compacts {
        Compacts::Pending { marker, auto: false } => {
            ("K5", format!("the manual compaction {marker} (/compact) is processed at the next step"))
        }
        Compacts::Pending { marker, auto: true } => {
            ("K5", format!("the automatic compaction {marker} is processed at the next step"))
        }
        Compacts::Overflow => (
            "K4",
            format!(
                "the last step used {} tokens, at or above the usable {}: the next step compacts",
                plan.tokens.unwrap_or(0),
                plan.usable
            ),
        ),
        Compacts::No if !params.compaction.auto() => {
            ("K4", "compaction.auto is false: opencode never compacts on its own".to_owned())
        }
        Compacts::No => match plan.tokens {
            Some(tokens) => (
                "K4",
                format!(
                    "the last step used {tokens} tokens, below the usable {}: no compaction; the fates below are those of a compaction now",
                    plan.usable
                ),
            ),
            None => (
                "K4",
                "no finished assistant message yet: no compaction; the fates below are those of a compaction now"
                    .to_owned(),
            ),
        },
    }
}

/// A message's fate, in words.
pub(super) fn fate(fate: &Fate, next_call: bool) -> (&'static str, String) {
    let sent = if next_call { "sent in the next call" } else { "not sent in the next call" };
    match fate {
        Fate::Dropped { by } => {
            ("K10", format!("cut from the history by the compaction {by}: only its summary remains"))
        }
        Fate::EarlierCompaction => (
            "K7.2",
            format!(
                "part of an earlier compaction: hidden from the summarizer, whose prior summary it is; {sent}"
            ),
        ),
        Fate::Summarised { .. } => {
            ("K8", format!("summarised: before the tail; {sent} until the compaction"))
        }
        Fate::Tail { .. } => ("K8", format!("kept verbatim in the tail after the summary; {sent}")),
        Fate::PendingMarker => ("K6", "the compaction marker: the next step writes the summary".to_owned()),
        Fate::Replayed => {
            ("K7.1", "the turn re-sent after the overflow compaction, not summarised".to_owned())
        }
    }
}
