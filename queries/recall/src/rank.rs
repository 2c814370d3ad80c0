//! docs/memory.md §10: BM25 over one store's candidates, the recency, file and phrase boosts, the
//! relative floor, and a fully deterministic order.

use std::collections::HashMap;

use crate::tokenize::{query_tokens, tokens};

/// BM25 parameters (§10).
const K1: f64 = 1.2;
const B: f64 = 0.75;
/// Records under this share of the top score are cut (the top hit is always kept).
const FLOOR: f64 = 0.15;
const FILE_BOOST: f64 = 1.5;
const PHRASE_BOOST: f64 = 1.3;
const DAY_MS: f64 = 86_400_000.0;

/// A count as a float for BM25. Token and record counts stay far below 2^52, where the
/// conversion is exact.
#[allow(clippy::cast_precision_loss)]
pub(crate) fn count(n: usize) -> f64 {
    n as f64
}

/// An age in days. Ages in milliseconds stay far below 2^52 (142 000 years), where the
/// conversion is exact.
#[allow(clippy::cast_precision_loss)]
fn days(ms: i64) -> f64 {
    ms.max(0) as f64 / DAY_MS
}

/// A score that can live in a salsa result: compared and hashed by its bits, which is exact
/// because every score is computed by the same arithmetic in the same order.
#[derive(Clone, Copy, Debug, PartialOrd, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
// What a reader of a reply needs, not the salsa note above.
#[cfg_attr(feature = "schema", schemars(description = "A relevance score: higher ranks first."))]
pub struct Score(pub f64);

impl PartialEq for Score {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

impl Eq for Score {}

impl std::hash::Hash for Score {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.to_bits().hash(state);
    }
}

/// What the ranker needs to know about one record.
#[derive(Clone, Debug)]
pub struct Doc<'a> {
    /// The record's id: the last tie-break.
    pub id: &'a str,
    /// The searchable text (§10 "Document text per store").
    pub text: String,
    /// Paths the record names, for the file boost.
    pub files: &'a [String],
    /// The timestamp recency and the tie-break use.
    pub time: i64,
    /// Explicit facts are exempt from recency decay.
    pub decays: bool,
}

/// Why a record was not ranked in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RankCut {
    /// No query token occurs in it.
    NoMatch,
    /// Under 0.15 × the top score.
    BelowFloor,
}

/// The ranking of one store: kept records best first, then the cut ones.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Ranking {
    /// `(index into the docs, score)`; the score is `None` when there was no query.
    pub kept: Vec<(usize, Option<Score>)>,
    /// The records left out, with why and the score they had.
    pub cut: Vec<(usize, RankCut, Score)>,
}

/// Ranks `docs` for `query` at `now` (epoch ms).
///
/// Without query tokens every record is kept, newest first (§10 "No query"); callers
/// that order differently (facts: explicit first) sort the docs and pass `time` to match.
pub fn rank(query: &str, docs: &[Doc<'_>], now: i64) -> Ranking {
    let query = query_tokens(query);
    if query.is_empty() {
        let mut kept: Vec<usize> = (0..docs.len()).collect();
        kept.sort_by(|&a, &b| docs[b].time.cmp(&docs[a].time).then_with(|| docs[a].id.cmp(docs[b].id)));
        return Ranking { kept: kept.into_iter().map(|i| (i, None)).collect(), cut: Vec::new() };
    }
    let doc_tokens: Vec<Vec<String>> = docs.iter().map(|d| tokens(&d.text)).collect();
    let n = count(docs.len());
    let average = count(doc_tokens.iter().map(Vec::len).sum::<usize>()) / n.max(1.0);
    let mut containing: HashMap<&str, usize> = HashMap::new();
    for tokens in &doc_tokens {
        for term in &query {
            if tokens.iter().any(|t| t == term) {
                *containing.entry(term.as_str()).or_default() += 1;
            }
        }
    }
    let phrase = normalize(&query_phrase(&query));
    let mut scored: Vec<(usize, f64)> = Vec::new();
    let mut cut = Vec::new();
    for (index, (doc, tokens)) in docs.iter().zip(&doc_tokens).enumerate() {
        let length = count(tokens.len());
        let mut score = 0.0;
        for term in &query {
            let tf = count(tokens.iter().filter(|t| *t == term).count());
            if tf == 0.0 {
                continue;
            }
            let with = count(containing.get(term.as_str()).copied().unwrap_or(0));
            let idf = (1.0 + (n - with + 0.5) / (with + 0.5)).ln();
            score += idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * length / average.max(1.0)));
        }
        if score == 0.0 {
            cut.push((index, RankCut::NoMatch, Score(0.0)));
            continue;
        }
        if doc.decays {
            let age_days = days(now - doc.time);
            score *= 1.0 / (1.0 + age_days / 30.0);
        }
        if doc
            .files
            .iter()
            .any(|f| f.split(['/', '\\']).any(|seg| query.iter().any(|q| q.eq_ignore_ascii_case(seg))))
        {
            score *= FILE_BOOST;
        }
        if query.len() >= 2 && !phrase.is_empty() && normalize(&doc.text).contains(&phrase) {
            score *= PHRASE_BOOST;
        }
        scored.push((index, score));
    }
    scored.sort_by(|&(a, sa), &(b, sb)| {
        sb.total_cmp(&sa)
            .then_with(|| docs[b].time.cmp(&docs[a].time))
            .then_with(|| docs[a].id.cmp(docs[b].id))
    });
    let top = scored.first().map_or(0.0, |&(_, s)| s);
    let mut kept = Vec::new();
    for (rank, (index, score)) in scored.into_iter().enumerate() {
        if rank > 0 && score < FLOOR * top {
            cut.push((index, RankCut::BelowFloor, Score(score)));
        } else {
            kept.push((index, Some(Score(score))));
        }
    }
    cut.sort_by_key(|&(index, _, _)| index);
    Ranking { kept, cut }
}

/// The query as a phrase: its tokens, space-separated (stopwords and punctuation gone, so
/// "use pnpm, not npm" matches "Use pnpm not npm").
fn query_phrase(tokens: &[String]) -> String {
    tokens.join(" ")
}

/// Lower-case, one space between tokens: the form the phrase boost compares.
fn normalize(text: &str) -> String {
    tokens(text).join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc<'a>(id: &'a str, text: &str, time: i64) -> Doc<'a> {
        Doc { id, text: text.to_owned(), files: &[], time, decays: false }
    }

    fn order(ranking: &Ranking) -> Vec<usize> {
        ranking.kept.iter().map(|(i, _)| *i).collect()
    }

    #[test]
    fn ranks_by_bm25_and_cuts_non_matches() {
        let docs = [
            doc("a", "Use pnpm, not npm, in this repo", 0),
            doc("b", "Prefers small commits", 0),
            doc("c", "npm scripts live in package.json; npm ci in CI", 0),
        ];
        let ranking = rank("npm", &docs, 0);
        assert_eq!(order(&ranking), [2, 0]);
        assert_eq!(ranking.cut, [(1, RankCut::NoMatch, Score(0.0))]);
    }

    #[test]
    fn ties_break_by_time_then_id() {
        let docs = [doc("b", "pnpm", 5), doc("a", "pnpm", 5), doc("c", "pnpm", 9)];
        assert_eq!(order(&rank("pnpm", &docs, 10)), [2, 1, 0]);
    }

    #[test]
    fn boosts_recency_files_and_phrases() {
        let files = ["src/cache/lru.rs".to_owned()];
        let old = Doc { decays: true, ..doc("old", "cache eviction", 0) };
        let new = Doc { decays: true, ..doc("new", "cache eviction", 60 * 86_400_000) };
        assert_eq!(order(&rank("cache", &[old.clone(), new], 60 * 86_400_000)), [1, 0]);
        let with_file = Doc { files: &files, ..doc("f", "cache eviction", 0) };
        assert_eq!(order(&rank("lru cache", &[doc("p", "cache eviction", 0), with_file], 0)), [1, 0]);
        let phrase = doc("q", "the cache eviction order", 0);
        let scattered = doc("r", "eviction of the cache order", 0);
        assert_eq!(order(&rank("cache eviction", &[scattered, phrase], 0)), [1, 0]);
    }

    #[test]
    fn floor_cuts_weak_hits_but_keeps_the_top() {
        let long = "pnpm ".to_owned() + &"filler words about other things ".repeat(40);
        let docs = [doc("a", "pnpm pnpm workspace", 0), doc("b", &long, 0)];
        let ranking = rank("pnpm workspace", &docs, 0);
        assert_eq!(order(&ranking), [0]);
        assert_eq!(ranking.cut[0].1, RankCut::BelowFloor);
    }

    #[test]
    fn no_query_orders_by_time() {
        let docs = [doc("a", "x", 1), doc("b", "y", 3), doc("c", "z", 2)];
        let ranking = rank("the of", &docs, 0);
        assert_eq!(order(&ranking), [1, 2, 0]);
        assert!(ranking.kept.iter().all(|(_, s)| s.is_none()));
    }
}
