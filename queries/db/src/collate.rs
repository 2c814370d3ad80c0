//! JavaScript's `a.localeCompare(b)` with no locale or options, the order opencode sorts
//! names in (B3 references, B4 servers, B5 skills).
//!
//! Bun's `localeCompare` is ICU collation for the default locale at tertiary strength
//! (case and accents break ties only), not code-point order: `Alpha` < `beta` < `Gamma`.
//! ICU4X's collator is the same algorithm with the same root data, so it is used rather
//! than an approximation by hand.

use std::cmp::Ordering;

use icu_collator::CollatorBorrowed;
use icu_collator::options::CollatorOptions;

/// The root collation and nothing else: `new_root` reads only the root tables, so the
/// tailorings of every other locale (about 0.9 MB of baked data, which `try_new` with a
/// locale would look up) are not linked into the binary. It is what `try_new` builds for
/// the default preferences: the root locale has no tailoring, reordering or diacritics of
/// its own.
static COLLATOR: CollatorBorrowed<'static> = CollatorBorrowed::new_root(CollatorOptions::default());

/// `a.localeCompare(b)` as an [`Ordering`]. Names equal under collation stay equal: JS's
/// sort is stable and so is `sort_by`, so such names keep the order they were found in, as
/// in opencode.
pub fn locale_compare(a: &str, b: &str) -> Ordering {
    COLLATOR.compare(a, b)
}

#[cfg(test)]
mod tests {
    use super::locale_compare;

    #[test]
    fn orders_like_javascript_locale_compare() {
        // The order the opencode 1.18.33 binary itself prints, run as Bun:
        // BUN_BE_BUN=1 opencode -e 'console.log([...].sort((a, b) => a.localeCompare(b)))'.
        let mut names = vec!["zeta", "beta", "Gamma", "_x", "alpha", "Alpha", "a-b", "ab", "a2", "a10", "é"];
        names.sort_by(|a, b| locale_compare(a, b));
        assert_eq!(names, ["_x", "a-b", "a10", "a2", "ab", "alpha", "Alpha", "beta", "é", "Gamma", "zeta"]);
    }

    #[test]
    fn orders_like_node_icu() {
        // node 20's (ICU) `names.sort((x, y) => x.localeCompare(y))`, the skills cases' names.
        let mut names = vec![
            "b", "B", "a", "A", "_x", "-y", "10", "9", "ab", "a-b", "a_b", "Zeta", "é", "a.b", "a b", "A1",
            "a1", "ä", "z",
        ];
        names.sort_by(|a, b| locale_compare(a, b));
        let node = [
            "_x", "-y", "10", "9", "a", "A", "ä", "a b", "a_b", "a-b", "a.b", "a1", "A1", "ab", "b", "B",
            "é", "z", "Zeta",
        ];
        assert_eq!(names, node);
    }
}
