//! `explain` as prose and as JSON.

use std::fmt::Write;

use ctxgraph_engine::answers::display;
use ctxgraph_engine::answers::explain::SkillsExplanation;
use ctxgraph_engine::answers::explain::{
    EntryExpansion, EntryReport, Explanation, Item, Loaded, Reason, SessionExplanation, Source, Stage,
    Target, TargetExplanation, Via,
};
use ctxgraph_engine::answers::memory::{Block, BlockId, Cut, CutReason, MemoryContext, Recalled};
use ctxgraph_engine::answers::session::{Role, ToolStatus};
use schemars::JsonSchema;
use serde::Serialize;

/// Every item, loaded ones first in prompt order, then the rest with their reasons.
pub fn text(explanation: &Explanation) -> String {
    let mut out = String::new();
    let git = if explanation.git { "git repository" } else { "not a git repository: / bounds the walk" };
    let loaded: Vec<&Item> = explanation.items.iter().filter(|i| i.loaded.is_some()).collect();
    let _ = writeln!(out, "working directory {}", display(&explanation.cwd));
    let _ = writeln!(out, "worktree root     {} ({git})", display(&explanation.worktree));
    let _ = writeln!(
        out,
        "system prompt     {} block{}, {} bytes, {} tokens ({})",
        loaded.len() + 1,
        if loaded.is_empty() { "" } else { "s" },
        explanation.total.bytes,
        explanation.total.tokens,
        explanation.tokenizer
    );
    let _ = writeln!(out, "\nIn the system prompt, in order:");
    let _ = writeln!(
        out,
        "  #1  environment block (B2)  {} bytes, {} tokens",
        explanation.environment.bytes, explanation.environment.tokens
    );
    for item in &loaded {
        if let Some(loaded) = &item.loaded {
            let _ = writeln!(out, "  #{}  {}  {}", loaded.position, item.source.label(), size(loaded));
            if let Some(via) = &item.via {
                let _ = writeln!(out, "      {}", via.describe());
            }
        }
    }
    let not_loaded: Vec<&Item> = explanation.items.iter().filter(|i| i.loaded.is_none()).collect();
    if !not_loaded.is_empty() {
        let _ = writeln!(out, "\nNot in the system prompt:");
        for item in not_loaded {
            let _ = writeln!(out, "  {}", item.source.label());
            if let Some(via) = &item.via {
                let _ = writeln!(out, "      found as: {}", via.describe());
            }
            reasons(&mut out, item, "      ");
        }
    }
    if !explanation.entries.is_empty() {
        let _ = writeln!(out, "\nConfig `instructions` entries:");
        for entry in &explanation.entries {
            entry_text(&mut out, entry);
        }
    }
    out
}

/// The answer for one target, in plain words.
pub fn target_text(answer: &TargetExplanation) -> String {
    let mut out = String::new();
    match &answer.target {
        Target::Entry(entry) => {
            let _ = writeln!(out, "instructions entry {entry:?}");
            for report in &answer.entries {
                entry_text(&mut out, report);
            }
            if answer.entries.is_empty() {
                let _ = writeln!(out, "  not in the merged config");
            }
            for item in &answer.items {
                item_text(&mut out, item);
            }
        }
        Target::File(_) => {
            for item in &answer.items {
                item_text(&mut out, item);
            }
        }
    }
    out
}

fn item_text(out: &mut String, item: &Item) {
    let label = item.source.label();
    if let Some(loaded) = &item.loaded {
        let _ = writeln!(
            out,
            "{label} is in the system prompt: block #{}, bytes {}..{} of `ctxgraph build` ({} bytes, {} tokens).",
            loaded.position, loaded.range.start, loaded.range.end, loaded.size.bytes, loaded.size.tokens
        );
        if let Some(via) = &item.via {
            let _ = writeln!(out, "  how: {}", via.describe());
        }
    } else {
        let what = match item.stage {
            Stage::Nearby => "is not in the system prompt",
            _ if item.via.is_some() => "was found but is not in the system prompt",
            _ => "is not in the system prompt",
        };
        let _ = writeln!(out, "{label} {what}.");
        if let Some(via) = &item.via {
            let _ = writeln!(out, "  found as: {}", via.describe());
        }
        reasons(out, item, "  ");
    }
}

fn reasons(out: &mut String, item: &Item, indent: &str) {
    for reason in &item.reasons {
        let _ = writeln!(out, "{indent}why: {}", reason.describe());
        if let Some(hint) = reason.hint() {
            let _ = writeln!(out, "{indent}fix: {hint}");
        }
    }
    if let Some(entry) = &item.load_with {
        let _ = writeln!(
            out,
            "{indent}to load it anyway, add to opencode.json at the repository root: \"instructions\": [{entry:?}]"
        );
    }
}

fn entry_text(out: &mut String, entry: &EntryReport) {
    let at = match entry.line {
        Some(line) => format!("{}:{line}", entry.config),
        None => entry.config.clone(),
    };
    let _ = writeln!(out, "  {:?} from {at}", entry.entry);
    match &entry.expansion {
        EntryExpansion::Remote { status } => {
            let _ = writeln!(out, "      {}", Reason::Remote { status: status.clone() }.describe());
        }
        EntryExpansion::Glob { mode, flag, pattern, levels } => {
            let how = match (*mode, flag) {
                ("absolute", _) => {
                    format!("absolute: only the file name {pattern:?} is a pattern, in its directory")
                }
                (_, Some(flag)) => format!(
                    "{}={} is set: globbed only in the global config directory",
                    flag.name, flag.value
                ),
                _ => format!(
                    "globbed as {pattern:?} in each directory from the working directory up to the worktree root"
                ),
            };
            let _ = writeln!(out, "      {how}");
            for level in levels {
                let matches = if level.matches.is_empty() {
                    "no match".to_owned()
                } else {
                    level.matches.iter().map(|m| display(m)).collect::<Vec<_>>().join(", ")
                };
                let _ = writeln!(out, "      {}: {matches}", display(&level.dir));
            }
        }
    }
}

fn size(loaded: &Loaded) -> String {
    format!("{} bytes, {} tokens", loaded.size.bytes, loaded.size.tokens)
}

/// The JSON shape: the library's values, with each reason's and chain's sentence added.
#[derive(Serialize, JsonSchema)]
pub struct ExplanationView<'a> {
    #[serde(flatten)]
    summary: Summary<'a>,
    /// Every rule file and URL looked at: loaded ones first, in prompt order, then the rest with their reasons.
    items: Vec<ItemView<'a>>,
    /// Each `instructions` entry of the merged config and what it expanded to.
    entries: &'a [EntryReport],
    /// The `<memory>` part, when `memory.enabled` puts one in the prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    memory: Option<MemoryView<'a>>,
    /// References (B3) and MCP servers (B4).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    stages: Option<super::stages::StagesView>,
    /// With `--opencode-agent`/`--model`: the message's first block (B1 or A2) and why.
    #[serde(skip_serializing_if = "Option::is_none")]
    message_prompt: Option<ctxgraph_engine::answers::profile::Block>,
    /// B5: each skill and SKILL.md, listed or not and why (left out when only opencode's
    /// built-in skill is listed).
    #[serde(skip_serializing_if = "Option::is_none")]
    skills: Option<&'a SkillsExplanation>,
}

/// The workspace the explanation is about, and the prompt's size.
#[derive(Serialize, JsonSchema)]
struct Summary<'a> {
    /// The working directory.
    cwd: String,
    /// The worktree root (the working directory's git root, else `/`).
    worktree: String,
    /// The worktree is a git repository (else `/` bounds the walk up).
    git: bool,
    /// The tokenizer the token counts are in.
    tokenizer: &'a str,
    /// The whole system prompt.
    total: ctxgraph_engine::answers::explain::Size,
    /// The environment block (B2).
    environment: ctxgraph_engine::answers::explain::Size,
}

impl<'a> ExplanationView<'a> {
    /// The explanation's JSON shape, borrowing from it: paths displayed, each reason's
    /// and chain's sentence written out.
    pub fn new(explanation: &'a Explanation) -> Self {
        ExplanationView {
            summary: Summary {
                cwd: display(&explanation.cwd),
                worktree: display(&explanation.worktree),
                git: explanation.git,
                tokenizer: explanation.tokenizer,
                total: explanation.total,
                environment: explanation.environment,
            },
            items: explanation.items.iter().map(ItemView::new).collect(),
            entries: &explanation.entries,
            memory: None,
            stages: None,
            message_prompt: None,
            skills: None,
        }
    }

    /// Adds the skills section, unless there is nothing in it but the built-in skill.
    #[must_use]
    pub fn with_skills(mut self, skills: &'a SkillsExplanation) -> Self {
        self.skills = (!skills.only_builtin()).then_some(skills);
        self
    }

    /// Adds the references and MCP sections.
    #[must_use]
    pub fn with_stages(mut self, stages: super::stages::StagesView) -> Self {
        self.stages = Some(stages);
        self
    }

    /// Adds the message's first block (the model or agent prompt).
    #[must_use]
    pub fn with_message_prompt(mut self, block: Option<ctxgraph_engine::answers::profile::Block>) -> Self {
        self.message_prompt = block;
        self
    }

    /// Adds the memory section.
    #[must_use]
    pub fn with_memory(mut self, memory: Option<&'a MemoryContext>) -> Self {
        self.memory = memory.map(MemoryView::new);
        self
    }
}

/// explain's memory section as JSON (docs/memory.md §11): per block, what was recalled with its
/// score, and every candidate that was not, with why.
#[derive(Serialize, JsonSchema)]
struct MemoryView<'a> {
    /// Characters of the `<memory>` text.
    chars: usize,
    /// The budget it was clamped to.
    max_chars: usize,
    /// docs/memory.md §11.4 step 6 fired: the text was cut hard at the budget.
    hard_cut: bool,
    /// Each block: the ones in the text, then the ones removed to fit the total.
    blocks: Vec<MemoryBlockView<'a>>,
}

/// One memory block (docs/memory.md §11.4): what was recalled into it and what was cut.
#[derive(Serialize, JsonSchema)]
struct MemoryBlockView<'a> {
    /// Which block.
    id: BlockId,
    /// Its heading.
    title: &'a str,
    /// Characters it takes.
    chars: usize,
    /// The budget it was fitted to (its scaled base budget, or more after step 4).
    budget: usize,
    /// Removed whole to fit the total (docs/memory.md §11.4 step 5).
    removed: bool,
    /// Items were dropped or shortened to fit.
    truncated: bool,
    /// Each item recalled into it, in order, with its score.
    recalled: &'a [Recalled],
    /// Each candidate that is not in it, with why.
    cut: Vec<CutView<'a>>,
}

/// A memory candidate left out, and why.
#[derive(Serialize, JsonSchema)]
struct CutView<'a> {
    #[serde(flatten)]
    cut: &'a Cut,
    /// Why it was cut, as a sentence.
    why: String,
}

impl<'a> MemoryView<'a> {
    fn new(memory: &'a MemoryContext) -> Self {
        let block = |block: &'a Block, removed: bool| MemoryBlockView {
            id: block.id,
            title: &block.title,
            chars: block.chars,
            budget: block.budget,
            removed,
            truncated: block.truncated,
            recalled: &block.items,
            cut: block.cut.iter().map(|cut| CutView { cut, why: cut_sentence(&cut.reason) }).collect(),
        };
        MemoryView {
            chars: memory.chars,
            max_chars: memory.max_chars,
            hard_cut: memory.hard_cut,
            blocks: memory
                .blocks
                .iter()
                .map(|b| block(b, false))
                .chain(memory.removed.iter().map(|b| block(b, true)))
                .collect(),
        }
    }
}

/// Why a memory candidate is not in the text, as a sentence.
fn cut_sentence(reason: &CutReason) -> String {
    match reason {
        CutReason::Inactive { why } => format!("inactive ({why})"),
        CutReason::NoMatch => "no query token matches".to_owned(),
        CutReason::BelowFloor => "below 0.15 × the top score".to_owned(),
        CutReason::ItemCap { cap } => format!("past the block's {cap}-item cap"),
        CutReason::Budget { budget } => format!("over the block's {budget}-char budget"),
        CutReason::BlockRemoved => "its block was removed to fit the total".to_owned(),
        CutReason::NotEligible { why } => why.clone(),
    }
}

/// explain's memory section as text: every recalled item with its score, every other
/// candidate with why it was cut.
/// The message's first block, in words: which prompt opens the message and why (B1: the
/// model's family; A2: the agent's own prompt and where it was written).
pub fn message_prompt_text(block: &ctxgraph_engine::answers::profile::Block) -> String {
    let mut out =
        format!("\nmessage prompt ({}, {} bytes): {}\n", block.rule, block.range.len(), without_rule(block));
    if let Some(reason) = &block.placeholder {
        let _ = writeln!(out, "  unavailable: {reason}");
    }
    out
}

/// A block's reason without the rule it ends with (` (B1)`), which the line names first.
fn without_rule(block: &ctxgraph_engine::answers::profile::Block) -> &str {
    block.reason.strip_suffix(&format!(" ({})", block.rule)).unwrap_or(&block.reason)
}

/// The memory section of explain's text: each recalled block with its size and budget, the
/// items recalled with their scores, and each cut candidate with why it was cut.
pub fn memory_text(context: &MemoryContext) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "\nmemory (docs/memory.md §11): {} of {} chars", context.chars, context.max_chars);
    for block in context.blocks.iter().chain(&context.removed) {
        let _ = writeln!(out, "  {} ({} chars, budget {})", block.title, block.chars, block.budget);
        for item in &block.items {
            let score = item.score.map_or_else(|| "-".to_owned(), |s| format!("{:.3}", s.0));
            let detail = if item.detail { " (with detail)" } else { "" };
            let _ = writeln!(out, "    recalled {} score {score}{detail}", item.id);
        }
        for cut in &block.cut {
            let score = cut.score.map_or_else(String::new, |s| format!(" score {:.3}", s.0));
            let _ = writeln!(out, "    cut {}{score}: {}", cut.id, cut_sentence(&cut.reason));
        }
    }
    out
}

/// The answer for one target: the target, and each item and entry it names.
#[derive(Serialize, JsonSchema)]
pub struct TargetView<'a> {
    /// What was asked about.
    target: &'a Target,
    /// Each rule file or URL the target names, with its fate.
    items: Vec<ItemView<'a>>,
    /// The `instructions` entries that are the target or name it.
    entries: &'a [EntryReport],
}

impl<'a> TargetView<'a> {
    /// The answer's JSON shape, borrowing from it, with each item's sentences written out.
    pub fn new(answer: &'a TargetExplanation) -> Self {
        TargetView {
            target: &answer.target,
            items: answer.items.iter().map(ItemView::new).collect(),
            entries: &answer.entries,
        }
    }
}

/// One rule file or URL, and its fate.
#[derive(Serialize, JsonSchema)]
struct ItemView<'a> {
    /// The rule file or URL.
    source: &'a Source,
    /// The discovery stage it belongs to.
    stage: Stage,
    /// It is in the system prompt.
    in_prompt: bool,
    /// How it was found, when it was.
    via: Option<ViaView<'a>>,
    /// Where it is in the prompt, when it is there.
    loaded: Option<&'a Loaded>,
    /// Why it is not there (empty when it is).
    reasons: Vec<ReasonView<'a>>,
    /// The `instructions` entry that would load it anyway, when one would.
    load_with: Option<&'a str>,
}

impl<'a> ItemView<'a> {
    fn new(item: &'a Item) -> Self {
        ItemView {
            source: &item.source,
            stage: item.stage,
            in_prompt: item.loaded.is_some(),
            via: item.via.as_ref().map(|via| ViaView { description: via.describe(), via }),
            loaded: item.loaded.as_ref(),
            reasons: item
                .reasons
                .iter()
                .map(|reason| ReasonView { message: reason.describe(), hint: reason.hint(), reason })
                .collect(),
            load_with: item.load_with.as_deref(),
        }
    }
}

/// How an item was found, with the chain's sentence.
#[derive(Serialize, JsonSchema)]
struct ViaView<'a> {
    #[serde(flatten)]
    via: &'a Via,
    /// The chain, in one sentence.
    description: String,
}

/// One reason an item is not in the prompt, with its sentence and hint.
#[derive(Serialize, JsonSchema)]
struct ReasonView<'a> {
    #[serde(flatten)]
    reason: &'a Reason,
    /// The reason, in one sentence.
    message: String,
    /// What to do about it, when there is something to do.
    hint: Option<String>,
}

/// `explain --session` in words: the next step, every message's fate, every read's rules.
pub fn session_text(answer: &SessionExplanation) -> String {
    let mut out = String::new();
    let next = &answer.next_step;
    let _ = writeln!(out, "session {}, {} messages", answer.session, answer.messages);
    let _ = writeln!(out, "\nNext step: {} ({})", next.why, next.rule);
    let tokens = next.tokens.map_or_else(|| "none".to_owned(), |t| t.to_string());
    let _ = writeln!(
        out,
        "  usable window {} tokens (K3), last step {tokens} tokens (K4), tail budget {} tokens (K8)",
        next.usable, next.budget
    );
    for turn in &next.turns {
        let _ = writeln!(out, "  turn {}: {} tokens, {} (K8)", turn.id, turn.tokens, turn.verdict());
    }
    if let Some(id) = &next.tail_start_id {
        let _ = writeln!(out, "  the tail starts at {id} (K8)");
    } else {
        let why = next.no_tail.unwrap_or_default();
        let _ = writeln!(out, "  no tail ({why}): everything before the compaction is summarised (K8)");
    }
    if next.prune.enabled {
        let _ = writeln!(
            out,
            "  pruning: {} tokens of tool output walked, {} past the protected 40000 (K11)",
            next.prune.total, next.prune.candidates
        );
    } else {
        let _ = writeln!(out, "  pruning: off (compaction.prune is not true) (K11)");
    }
    if !answer.history.is_empty() {
        let _ = writeln!(out, "\nMessages:");
    }
    for message in &answer.history {
        let role = match message.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        let _ = writeln!(out, "  {} {role:<9}  {} ({})", message.id, message.why, message.rule);
        if !message.pruned.is_empty() {
            let _ = writeln!(out, "      pruning marks {} (K11)", message.pruned.join(", "));
        }
        if !message.cleared.is_empty() {
            let _ =
                writeln!(out, "      already pruned, read as cleared: {} (K11)", message.cleared.join(", "));
        }
    }
    if !answer.reads.is_empty() {
        let _ = writeln!(out, "\nReads:");
    }
    for read in &answer.reads {
        let kind = serde_json::to_value(read.kind)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        let status = match (&read.part, read.status) {
            (Some(part), Some(ToolStatus::Error)) => format!("{part}, failed"),
            (Some(part), _) => part.clone(),
            (None, _) => "asked: a read at the next step".to_owned(),
        };
        let _ = writeln!(out, "  {} ({kind}) in {} [{status}]", display(&read.file), read.message);
        if read.rules.is_empty() {
            let _ = writeln!(out, "      no rule file between it and the working directory (N3)");
        }
        for rule in &read.rules {
            let _ = writeln!(out, "      {}: {} ({})", display(&rule.found.path), rule.why, rule.rule);
        }
        if let Some(recorded) = read.recorded.as_ref().filter(|r| **r != read.loaded) {
            let list = |paths: &[std::path::PathBuf]| {
                paths.iter().map(|p| display(p)).collect::<Vec<_>>().join(", ")
            };
            let _ = writeln!(
                out,
                "      note: the session recorded metadata.loaded [{}]; the files now give [{}]",
                list(recorded),
                list(&read.loaded)
            );
        }
    }
    out
}
