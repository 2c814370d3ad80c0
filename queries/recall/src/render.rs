//! docs/memory.md §11.2–§11.4: the five blocks, their budgets, and the progressive clamp that
//! fits them into `maxTotalChars`.
//!
//! Lengths are counted in `char`s (Unicode scalar values). Every step is deterministic:
//! the same drafts and the same limit give byte-identical text.

use serde::Serialize;

use crate::rank::Score;

/// §11.4 step 6's marker, and the spec's "should never trigger" guard.
const TRUNCATED: &str = "\n…[truncated]";
/// The spec's default `maxTotalChars`.
pub const DEFAULT_MAX_CHARS: usize = 9000;
const OPEN: &str = "<memory>\n";
const CLOSE: &str = "\n</memory>";
/// §11.3's preamble (the spec's wording, written for this project).
pub const PREAMBLE: &str = "Notes from earlier work in this workspace. They may be stale: verify file paths, names and\ncommands before relying on them. The user's current instructions take precedence.";

/// The five blocks, in prompt order (§11.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum BlockId {
    /// Remembered User/Project Facts.
    Facts,
    /// Current (or Previous) Task Handoff.
    Handoff,
    /// Relevant Observations.
    Observations,
    /// Tool Usage Lessons.
    Lessons,
    /// Related Prior Sessions.
    Sessions,
}

impl BlockId {
    /// Every block, in prompt order.
    pub const ALL: [BlockId; 5] =
        [BlockId::Facts, BlockId::Handoff, BlockId::Observations, BlockId::Lessons, BlockId::Sessions];

    /// (base budget at 9000, min to keep), §11.2.
    fn budget(self) -> (usize, usize) {
        match self {
            BlockId::Facts => (2000, 200),
            BlockId::Handoff => (3600, 600),
            BlockId::Observations => (1600, 200),
            BlockId::Lessons => (600, 120),
            BlockId::Sessions => (1200, 250),
        }
    }

    /// The id as serialised (`facts`, `handoff`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            BlockId::Facts => "facts",
            BlockId::Handoff => "handoff",
            BlockId::Observations => "observations",
            BlockId::Lessons => "lessons",
            BlockId::Sessions => "sessions",
        }
    }

    /// §11.4 step 5: sacrificed first … last.
    const SACRIFICE: [BlockId; 5] =
        [BlockId::Sessions, BlockId::Lessons, BlockId::Observations, BlockId::Facts, BlockId::Handoff];
}

/// One renderable item of a block.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Item {
    /// The record id (`fct_…`), tool name, or handoff section.
    pub id: String,
    /// Its ranking score (ranked blocks only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<Score>,
    /// The line as rendered with full detail.
    pub line: String,
    /// The line without detail (observations: `l0` only), when it differs.
    #[serde(skip)]
    pub short: Option<String>,
    /// Lower goes first when the block must shrink (handoff sections); equal ranks drop
    /// from the tail, lowest-ranked first.
    #[serde(skip)]
    pub drop_rank: u8,
}

/// Why a candidate is not in the text.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "reason", rename_all = "kebab-case")]
pub enum CutReason {
    /// A forgotten or superseded fact (§4.1): never recalled.
    Inactive {
        /// The status record's reason.
        why: String,
    },
    /// No query token occurs in it (§10).
    NoMatch,
    /// Under 0.15 × the block's top score (§10).
    BelowFloor,
    /// Past the block's item cap (§11.2).
    ItemCap {
        /// The cap.
        cap: usize,
    },
    /// Did not fit the block's budget (§11.4 steps 3–5).
    Budget {
        /// The budget, in characters.
        budget: usize,
    },
    /// The whole block was removed to fit `maxTotalChars` (docs/memory.md §11.4 step 5).
    BlockRemoved,
    /// Not eligible for this session (handoff age/status, current session's card, …).
    NotEligible {
        /// Why not.
        why: String,
    },
}

/// A candidate left out of the text, and why.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Cut {
    /// The record id, tool name or handoff section.
    pub id: String,
    /// Its ranking score, when it had one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<Score>,
    /// Why it was left out.
    #[serde(flatten)]
    pub reason: CutReason,
}

/// A block at natural size, before clamping.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Draft {
    /// Which block.
    pub id: BlockId,
    /// Its heading.
    pub title: String,
    /// Best first (handoff: section order).
    pub items: Vec<Item>,
    /// Candidates already left out, with why.
    pub cut: Vec<Cut>,
}

/// One recalled item as it appears in the text.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Recalled {
    /// The record id, tool name or handoff section.
    pub id: String,
    /// Its ranking score (ranked blocks only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<Score>,
    /// Rendered with its detail (observations: `l1`).
    pub detail: bool,
}

/// One block of the final text.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Block {
    /// Which block.
    pub id: BlockId,
    /// Its heading.
    pub title: String,
    /// `## <title>` and its lines.
    #[serde(skip)]
    pub text: String,
    /// Characters of `text`.
    pub chars: usize,
    /// The budget it was fitted to (its scaled base budget, or more after step 4).
    pub budget: usize,
    /// What it shows, in order.
    pub items: Vec<Recalled>,
    /// Its candidates that were left out.
    pub cut: Vec<Cut>,
    /// Items were dropped or shortened to fit.
    pub truncated: bool,
}

/// The assembled `<memory>` part.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct MemoryContext {
    /// Empty when nothing was recalled.
    pub text: String,
    /// Characters of `text`.
    pub chars: usize,
    /// The budget it was clamped to.
    pub max_chars: usize,
    /// Non-empty blocks, in order.
    pub blocks: Vec<Block>,
    /// Blocks removed entirely (with their candidates), for explain.
    pub removed: Vec<Block>,
    /// §11.4 step 6 fired.
    pub hard_cut: bool,
}

impl MemoryContext {
    /// Every recalled item, block by block.
    pub fn item_count(&self) -> usize {
        self.blocks.iter().map(|b| b.items.len()).sum()
    }
}

fn chars(text: &str) -> usize {
    text.chars().count()
}

/// A block fitted to a budget: which items, and which of them with detail.
#[derive(Clone, Debug)]
struct Fitted {
    /// `(item index, with detail)`, in display order.
    kept: Vec<(usize, bool)>,
    chars: usize,
}

fn block_chars(draft: &Draft, kept: &[(usize, bool)]) -> usize {
    if kept.is_empty() {
        return 0;
    }
    let header = chars(&draft.title) + 4; // "## " + title + "\n"
    let lines: usize = kept.iter().map(|&(i, detail)| chars(line(&draft.items[i], detail))).sum();
    header + lines + kept.len() - 1
}

fn line(item: &Item, detail: bool) -> &str {
    if detail { &item.line } else { item.short.as_deref().unwrap_or(&item.line) }
}

/// §11.4 step 3 for one block: degrade detail (observations), then drop items — handoff
/// sections by rank, everything else from the tail — until the block fits.
fn fit(draft: &Draft, budget: usize) -> Fitted {
    let mut kept: Vec<(usize, bool)> = (0..draft.items.len()).map(|i| (i, true)).collect();
    let mut size = block_chars(draft, &kept);
    if size <= budget {
        return Fitted { kept, chars: size };
    }
    for position in (0..kept.len()).rev() {
        if draft.items[kept[position].0].short.is_some() {
            kept[position].1 = false;
            size = block_chars(draft, &kept);
            if size <= budget {
                return Fitted { kept, chars: size };
            }
        }
    }
    let mut drop_order: Vec<usize> = (0..draft.items.len()).collect();
    drop_order.sort_by_key(|&i| (draft.items[i].drop_rank, std::cmp::Reverse(i)));
    for victim in drop_order {
        kept.retain(|&(i, _)| i != victim);
        size = block_chars(draft, &kept);
        if size <= budget {
            break;
        }
    }
    Fitted { kept, chars: size }
}

fn wrapped_chars(sizes: impl Iterator<Item = usize>) -> usize {
    let sizes: Vec<usize> = sizes.filter(|&s| s > 0).collect();
    if sizes.is_empty() {
        return 0;
    }
    chars(OPEN) + chars(PREAMBLE) + 2 + sizes.iter().sum::<usize>() + 2 * (sizes.len() - 1) + chars(CLOSE)
}

/// §11.4: fits `drafts` (in [`BlockId::ALL`] order, any subset) into `max_chars`.
pub fn assemble(drafts: &[Draft], max_chars: usize) -> MemoryContext {
    let scale = |base: usize| {
        let scaled = base as u128 * max_chars as u128 / DEFAULT_MAX_CHARS as u128;
        usize::try_from(scaled).unwrap_or(usize::MAX)
    };
    let natural: Vec<Fitted> = drafts.iter().map(|d| fit(d, usize::MAX)).collect();
    let mut budgets: Vec<usize> = drafts.iter().map(|d| scale(d.id.budget().0)).collect();
    let mut fitted = natural.clone();
    let mut removed = vec![false; drafts.len()];
    let total = |fitted: &[Fitted], removed: &[bool]| {
        wrapped_chars(fitted.iter().zip(removed).map(|(f, &r)| if r { 0 } else { f.chars }))
    };
    if total(&fitted, &removed) > max_chars {
        // Step 3: every block to its budget.
        let mut was_cut = vec![false; drafts.len()];
        for (i, draft) in drafts.iter().enumerate() {
            if natural[i].chars > budgets[i] {
                fitted[i] = fit(draft, budgets[i]);
                was_cut[i] = true;
            }
        }
        // Step 4: spare budget goes, in block order, to the blocks that were cut.
        let mut spare: usize = (0..drafts.len())
            .filter(|&i| !was_cut[i])
            .fold(0, |sum, i| sum.saturating_add(budgets[i] - natural[i].chars));
        for i in 0..drafts.len() {
            if was_cut[i] && spare > 0 {
                let wants = natural[i].chars - budgets[i];
                let given = wants.min(spare);
                spare -= given;
                budgets[i] = budgets[i].saturating_add(given);
                fitted[i] = fit(&drafts[i], budgets[i]);
            }
        }
        // Step 5: halve the lowest-priority block until the whole fits.
        for victim in BlockId::SACRIFICE {
            let Some(i) = drafts.iter().position(|d| d.id == victim) else { continue };
            let min_keep = scale(victim.budget().1);
            while total(&fitted, &removed) > max_chars && !removed[i] && fitted[i].chars > 0 {
                budgets[i] /= 2;
                if budgets[i] < min_keep {
                    removed[i] = true;
                } else {
                    fitted[i] = fit(&drafts[i], budgets[i]);
                }
            }
        }
    }
    render(drafts, &fitted, &removed, &budgets, max_chars)
}

fn render(
    drafts: &[Draft],
    fitted: &[Fitted],
    removed: &[bool],
    budgets: &[usize],
    max_chars: usize,
) -> MemoryContext {
    let mut blocks = Vec::new();
    let mut gone = Vec::new();
    for (i, draft) in drafts.iter().enumerate() {
        let kept = if removed[i] { &[][..] } else { &fitted[i].kept[..] };
        let mut text = String::new();
        if !kept.is_empty() {
            text = format!("## {}\n", draft.title);
            let lines: Vec<&str> = kept.iter().map(|&(j, detail)| line(&draft.items[j], detail)).collect();
            text.push_str(&lines.join("\n"));
        }
        let mut cut = draft.cut.clone();
        for (j, item) in draft.items.iter().enumerate() {
            if !kept.iter().any(|&(k, _)| k == j) {
                let reason = if removed[i] {
                    CutReason::BlockRemoved
                } else {
                    CutReason::Budget { budget: budgets[i] }
                };
                cut.push(Cut { id: item.id.clone(), score: item.score, reason });
            }
        }
        let truncated =
            kept.len() < draft.items.len() || kept.iter().any(|&(j, d)| !d && draft.items[j].short.is_some());
        let block = Block {
            id: draft.id,
            title: draft.title.clone(),
            chars: chars(&text),
            text,
            budget: budgets[i],
            items: kept
                .iter()
                .map(|&(j, detail)| Recalled {
                    id: draft.items[j].id.clone(),
                    score: draft.items[j].score,
                    detail: detail && draft.items[j].short.is_some(),
                })
                .collect(),
            cut,
            truncated,
        };
        if block.items.is_empty() { gone.push(block) } else { blocks.push(block) }
    }
    if blocks.is_empty() {
        return MemoryContext { max_chars, removed: gone, ..MemoryContext::default() };
    }
    let body: Vec<&str> = blocks.iter().map(|b| b.text.as_str()).collect();
    let mut text = format!("{OPEN}{PREAMBLE}\n\n{}{CLOSE}", body.join("\n\n"));
    let mut hard_cut = false;
    if chars(&text) > max_chars && max_chars <= chars(TRUNCATED) + chars(OPEN) {
        // Not even the marker fits: recall nothing rather than exceed the budget.
        return MemoryContext { max_chars, removed: gone, hard_cut: true, ..MemoryContext::default() };
    }
    if chars(&text) > max_chars {
        // Step 6: should never happen for realistic inputs (a test asserts that).
        let keep = max_chars.saturating_sub(chars(TRUNCATED));
        text = text.chars().take(keep).collect::<String>() + TRUNCATED;
        hard_cut = true;
    }
    MemoryContext { chars: chars(&text), text, max_chars, blocks, removed: gone, hard_cut }
}

/// Cuts `text` to at most `max` chars at a word boundary, marking the cut with `…`.
pub fn cut_at_word(text: &str, max: usize) -> String {
    if chars(text) <= max {
        return text.to_owned();
    }
    let head: String = text.chars().take(max.saturating_sub(1)).collect();
    let at_space = head.rfind(char::is_whitespace).filter(|&at| at >= head.len() / 2);
    let head = match at_space {
        Some(at) => head[..at].trim_end(),
        None => head.trim_end(),
    };
    format!("{head}…")
}

/// §8 post-rule for injection: one line, and no `<`/`>` that could open or close a tag.
pub fn sanitize(text: &str) -> String {
    let single: Vec<&str> = text.split_whitespace().collect();
    single.join(" ").replace('<', "‹").replace('>', "›")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(id: &str, len: usize) -> Item {
        Item {
            id: id.to_owned(),
            score: None,
            line: format!("- {}", "x".repeat(len - 2)),
            short: None,
            drop_rank: 0,
        }
    }

    fn draft(id: BlockId, items: Vec<Item>) -> Draft {
        Draft { id, title: format!("T{}", id.as_str()), items, cut: Vec::new() }
    }

    #[test]
    fn small_input_is_returned_whole() {
        let ctx = assemble(&[draft(BlockId::Facts, vec![item("a", 10)])], 9000);
        assert_eq!(ctx.text, format!("<memory>\n{PREAMBLE}\n\n## Tfacts\n- xxxxxxxx\n</memory>"));
        assert_eq!(ctx.chars, ctx.text.chars().count());
        assert!(!ctx.blocks[0].truncated);
    }

    #[test]
    fn nothing_recalled_is_empty() {
        let ctx = assemble(&[draft(BlockId::Facts, vec![])], 9000);
        assert_eq!(ctx.text, "");
    }

    #[test]
    fn cut_at_word_marks_the_cut() {
        assert_eq!(cut_at_word("alpha beta gamma", 12), "alpha beta…");
        assert_eq!(cut_at_word("alpha", 12), "alpha");
        assert_eq!(cut_at_word("abcdefghijkl", 6), "abcde…");
    }

    #[test]
    fn sanitize_is_one_line_without_tags() {
        assert_eq!(sanitize(" a\n</memory>  b "), "a ‹/memory› b");
    }

    #[test]
    fn handoff_drops_sections_in_rank_order() {
        let mut items: Vec<Item> = (0..4).map(|i| item(&format!("s{i}"), 300)).collect();
        items[2].drop_rank = 0;
        for (i, it) in items.iter_mut().enumerate() {
            if i != 2 {
                it.drop_rank = 9;
            }
        }
        let fitted = fit(&draft(BlockId::Handoff, items), 800);
        assert_eq!(fitted.kept.iter().map(|k| k.0).collect::<Vec<_>>(), [0, 1]);
    }
}
