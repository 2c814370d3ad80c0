//! B5.6: the listing's order, JavaScript's `a.name.localeCompare(b.name)` with no locale or
//! options. opencode runs on Bun (`JavaScriptCore`), whose `localeCompare` is ICU's collation
//! for the default locale; the root collation (CLDR) is what `en`/`und` use. ICU4X's collator
//! implements that table, so names compare as they do in opencode: case is a tertiary
//! difference (`a` < `B` < `b`… by letter first, lower case first on ties), punctuation and
//! digits sort before letters, and equal names compare equal.

use std::cmp::Ordering;
use std::sync::LazyLock;

use icu_collator::options::CollatorOptions;
use icu_collator::{CollatorBorrowed, CollatorPreferences};

static ROOT: LazyLock<CollatorBorrowed<'static>> = LazyLock::new(|| {
    // Baked data for the root locale cannot fail to load.
    CollatorBorrowed::try_new(CollatorPreferences::default(), CollatorOptions::default())
        .expect("ICU4X compiled collation data for the root locale")
});

/// `a.localeCompare(b)` as opencode's runtime computes it.
pub fn locale_compare(a: &str, b: &str) -> Ordering {
    ROOT.compare(a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_collation_order() {
        // The expected order is node 20's (ICU) `names.sort((x, y) => x.localeCompare(y))`.
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
