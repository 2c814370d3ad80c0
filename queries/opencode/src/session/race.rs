//! N4.1: which of the parallel reads of one step claims each nearby rule, and where the
//! answer is opencode's own race.
//!
//! The model, read off opencode 1.18.33's `Instruction.resolve` and checked against
//! recordings (`tests/session/s17`, `s18`, `s19`): the reads start together in call order.
//! A read's walk advances by I/O: one existence check per rule name tried in each directory
//! (all of them where none exists) and, when it claims a rule, the read of that file. A
//! rule found already claimed is skipped without a file read. So a read decides a rule
//! after its existence checks so far plus one step per rule it claimed on the way, and the
//! first read to decide takes it (call order breaks a tie).
//!
//! The recordings show this as a tendency, not a law: I/O completes in whatever order the
//! machine's load gives it. Two reads of one directory went to the one listed second once in
//! eight runs, a lead of one step went either way, and a read that needed four steps lost
//! once in four runs to one that needed seven. So the model is sure of a winner only when it
//! decides in less than half the steps any other read needs (counting every claim it might
//! have made before as a step, the other read's as free). Otherwise every read that could
//! have come first is a possible holder: opencode's race, with the model's pick (ties to the
//! read listed first) as the likelier.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};
use std::path::PathBuf;

use crate::nearby::NearbyRule;

/// One racing read: the rules its walk finds.
pub(super) struct Racer<'a> {
    /// Its walk, nearest first.
    pub rules: &'a [NearbyRule],
}

/// What the race made of one rule of one read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    /// Not contested: skipped before any claim (the target, the system prompt, loaded by
    /// an earlier completed read) or claimed before the race began.
    Settled,
    /// This read claims it.
    Claims,
    /// The racer at this index claimed it first.
    Lost(usize),
}

/// A rule's verdict for one read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Outcome {
    /// The likelier outcome.
    pub verdict: Verdict,
    /// The rule's possible holders: an index into [`Race::holders`]; `None` when settled.
    pub holders: Option<usize>,
}

/// The racers that may end up holding one rule. Every read whose walk finds the rule shares
/// the one list (a message of thousands of parallel reads in a few directories would
/// otherwise copy the same list into each of its reads).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Holders {
    /// In call order, the first [`LISTED_HOLDERS`] of them.
    pub listed: Vec<usize>,
    /// How many more may hold it than `listed` names.
    pub unlisted: usize,
}

impl Holders {
    /// More than one read may hold the rule: opencode's race.
    pub fn contested(&self) -> bool {
        self.listed.len() + self.unlisted > 1
    }
}

/// What the race made of every rule of every racer.
pub(super) struct Race {
    /// Each racer's outcomes, rule by rule.
    pub outcomes: Vec<Vec<Outcome>>,
    /// Each claimed rule's possible holders.
    pub holders: Vec<Holders>,
}

/// How many possible holders an outcome lists. Every read of a step may tie for a rule (a
/// thousand reads in one directory), and listing them all on each read would make the
/// answer quadratic in the step; past this many, the rest are counted.
pub(super) const LISTED_HOLDERS: usize = 16;

/// Runs the race among `racers` (in call order). `settled` says which rules no racer
/// contests.
pub(super) fn run(racers: &[Racer<'_>], settled: impl Fn(&NearbyRule) -> bool) -> Race {
    let n = racers.len();
    let mut next = vec![0usize; n];
    let mut claimed = vec![0usize; n];
    let mut holder: BTreeMap<&PathBuf, usize> = BTreeMap::new();
    let mut verdicts: Vec<Vec<Verdict>> =
        racers.iter().map(|r| vec![Verdict::Settled; r.rules.len()]).collect();
    // The claims in the order they happen, for the race pass.
    let mut claims: Vec<(usize, usize)> = Vec::new();
    // The likelier run: each step, the racer whose next decision comes first (a heap keyed
    // by when that is, call order breaking ties: a step costs log n, not n, so a message of
    // thousands of parallel reads stays linear in its reads).
    let due = |k: usize, claimed: usize| racers[k].rules.get(next[k]).map(|rule| rule.checks + claimed);
    let mut queue: BinaryHeap<Reverse<(usize, usize)>> =
        (0..n).filter_map(|k| due(k, 0).map(|at| Reverse((at, k)))).collect();
    while let Some(Reverse((_, k))) = queue.pop() {
        let i = next[k];
        next[k] += 1;
        let rule = &racers[k].rules[i];
        verdicts[k][i] = if settled(rule) {
            Verdict::Settled
        } else if let Some(&first) = holder.get(&rule.path) {
            Verdict::Lost(first)
        } else {
            holder.insert(&rule.path, k);
            claimed[k] += 1;
            claims.push((k, i));
            Verdict::Claims
        };
        if let Some(rule) = racers[k].rules.get(next[k]) {
            queue.push(Reverse((rule.checks + claimed[k], k)));
        }
    }
    let (index, holders) = possible_holders(racers, &verdicts, &claims);
    let outcomes = verdicts
        .into_iter()
        .enumerate()
        .map(|(k, row)| {
            row.into_iter()
                .enumerate()
                .map(|(i, verdict)| {
                    let holders = match verdict {
                        Verdict::Settled => None,
                        _ => index.get(&racers[k].rules[i].path).copied(),
                    };
                    Outcome { verdict, holders }
                })
                .collect()
        })
        .collect();
    Race { outcomes, holders }
}

/// Every claimed rule's possible holders, taken in claim order so that a racer's earlier
/// possible claims (each a file read that may have slowed it) are known when it races on:
/// the lists, and where each rule's is.
fn possible_holders<'a>(
    racers: &'a [Racer<'_>],
    verdicts: &[Vec<Verdict>],
    claims: &[(usize, usize)],
) -> (HashMap<&'a PathBuf, usize>, Vec<Holders>) {
    let mut may_hold: Vec<Vec<bool>> = racers.iter().map(|r| vec![false; r.rules.len()]).collect();
    // Each rule's place in every walk that finds it, in call order: a claim looks at the
    // reads that share its rule, not at every read of the step.
    let mut walks_finding: HashMap<&PathBuf, Vec<(usize, usize)>> = HashMap::new();
    for (b, racer) in racers.iter().enumerate() {
        for (j, rule) in racer.rules.iter().enumerate() {
            walks_finding.entry(&rule.path).or_default().push((b, j));
        }
    }
    let mut index = HashMap::new();
    let mut lists = Vec::new();
    for &(w, i) in claims {
        let path = &racers[w].rules[i].path;
        // The latest the winner decides: every claim it may have made before cost a step.
        let latest = racers[w].rules[i].checks + may_hold[w][..i].iter().filter(|&&m| m).count();
        let mut holders = vec![w];
        for &(b, j) in walks_finding.get(path).map_or(&[][..], Vec::as_slice) {
            if b == w || verdicts[b][j] != Verdict::Lost(w) {
                continue;
            }
            // The earliest the other read decides: its checks alone.
            let earliest = racers[b].rules[j].checks;
            if 2 * latest >= earliest {
                holders.push(b);
                may_hold[b][j] = true;
            }
        }
        may_hold[w][i] = true;
        holders.sort_unstable();
        let unlisted = holders.len().saturating_sub(LISTED_HOLDERS);
        holders.truncate(LISTED_HOLDERS);
        index.insert(path, lists.len());
        lists.push(Holders { listed: holders, unlisted });
    }
    (index, lists)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Racer `k`'s rule `i`: its verdict, the listed holders and how many more.
    fn outcome(race: &Race, k: usize, i: usize) -> (Verdict, Vec<usize>, usize) {
        let outcome = &race.outcomes[k][i];
        let holders = outcome.holders.map(|h| race.holders[h].clone());
        let (listed, unlisted) = holders.map_or((Vec::new(), 0), |h| (h.listed, h.unlisted));
        (outcome.verdict.clone(), listed, unlisted)
    }

    fn rule(path: &str, checks: usize) -> NearbyRule {
        NearbyRule {
            path: PathBuf::from(path),
            block: Some(format!("Instructions from: {path}\nx")),
            skipped: None,
            checks,
        }
    }

    /// s18's first step: `h3/frame.rs`, `h3/ffi.rs`, `recovery/bw.rs`. frame.rs likely takes
    /// `h3/AGENTS.md` (a tie at their first directory, frame.rs listed first; recorded 7 of
    /// 8); `q/AGENTS.md` likely goes to ffi.rs, which skipped `h3` without a file read
    /// (recorded 5 of 8, frame.rs 3), and bw.rs, at 7 checks against 5, may join that race.
    #[test]
    fn a_claimed_rule_file_read_can_lose_the_parent() {
        let frame = [rule("/p/q/src/h3/AGENTS.md", 1), rule("/p/q/AGENTS.md", 5)];
        let ffi = frame.clone();
        let bw = [rule("/p/q/AGENTS.md", 7)];
        let racers = [Racer { rules: &frame }, Racer { rules: &ffi }, Racer { rules: &bw }];
        let out = run(&racers, |_| false);
        assert_eq!(outcome(&out, 0, 0), (Verdict::Claims, vec![0, 1], 0));
        assert_eq!(outcome(&out, 1, 0), (Verdict::Lost(0), vec![0, 1], 0));
        assert_eq!(outcome(&out, 1, 1), (Verdict::Claims, vec![0, 1, 2], 0));
        assert_eq!(outcome(&out, 0, 1), (Verdict::Lost(1), vec![0, 1, 2], 0));
        assert_eq!(outcome(&out, 2, 0), (Verdict::Lost(1), vec![0, 1, 2], 0));
    }

    /// s18's third step: a claim one directory below the rule and its file read (three
    /// steps) against three directories without rules (ten checks) is sure; s19's first,
    /// four steps against seven, is a race (recorded: 3 of 4 runs to the nearer read).
    #[test]
    fn only_a_wide_lead_is_sure() {
        let near = [rule("/p/e/n/AGENTS.md", 1), rule("/p/e/AGENTS.md", 2)];
        let far = [rule("/p/e/AGENTS.md", 10)];
        let racers = [Racer { rules: &far }, Racer { rules: &near }];
        let out = run(&racers, |_| false);
        assert_eq!(outcome(&out, 1, 1), (Verdict::Claims, vec![1], 0));
        assert_eq!(outcome(&out, 0, 0), (Verdict::Lost(1), vec![1], 0));

        let claude = [rule("/p/g/m/CLAUDE.md", 2), rule("/p/g/AGENTS.md", 3)];
        let far = [rule("/p/g/AGENTS.md", 7)];
        let racers = [Racer { rules: &far }, Racer { rules: &claude }];
        let out = run(&racers, |_| false);
        assert_eq!(outcome(&out, 1, 1), (Verdict::Claims, vec![0, 1], 0));
    }

    /// A thousand reads in one directory all tie for its rule: each lists the first
    /// [`LISTED_HOLDERS`] possible holders and counts the rest, so the answer for the whole
    /// step stays linear in its reads.
    #[test]
    fn a_wide_tie_lists_a_few_holders_and_counts_the_rest() {
        let walk = [rule("/p/d/AGENTS.md", 1)];
        let racers: Vec<Racer<'_>> = (0..1000).map(|_| Racer { rules: &walk }).collect();
        let out = run(&racers, |_| false);
        let listed: Vec<usize> = (0..LISTED_HOLDERS).collect();
        assert_eq!(outcome(&out, 0, 0), (Verdict::Claims, listed.clone(), 1000 - LISTED_HOLDERS));
        assert_eq!(outcome(&out, 999, 0), (Verdict::Lost(0), listed, 1000 - LISTED_HOLDERS));
        // One list for the rule, shared by every read that finds it.
        assert_eq!(out.holders.len(), 1);
    }
}
