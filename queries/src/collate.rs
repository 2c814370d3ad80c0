//! JavaScript's `a.localeCompare(b)` with no locale or options, the order opencode sorts
//! names in (B3 references, B4 servers, B5 skills).
//!
//! Bun's `localeCompare` is ICU collation for the default locale at tertiary strength
//! (case and accents break ties only), not code-point order: `Alpha` < `beta` < `Gamma`.
//! ICU4X's collator is the same algorithm with the same root data, so it is used rather
//! than an approximation by hand.

use std::cmp::Ordering;
use std::sync::OnceLock;

use icu_collator::options::CollatorOptions;
use icu_collator::{CollatorBorrowed, CollatorPreferences};

fn collator() -> Option<&'static CollatorBorrowed<'static>> {
    static COLLATOR: OnceLock<Option<CollatorBorrowed<'static>>> = OnceLock::new();
    COLLATOR
        .get_or_init(|| {
            CollatorBorrowed::try_new(CollatorPreferences::default(), CollatorOptions::default()).ok()
        })
        .as_ref()
}

/// `a.localeCompare(b)` as an [`Ordering`]; equal under collation falls back to code-point
/// order, so sorting is deterministic (JS's sort is stable; callers sort unique names).
pub fn locale_compare(a: &str, b: &str) -> Ordering {
    // The baked root data always loads; code-point order is only the unreachable fallback.
    let collated = collator().map_or(Ordering::Equal, |c| c.compare(a, b));
    collated.then_with(|| a.cmp(b))
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
}
