//! The session half of opencode V1 (N2–N7 in docs/opencode/nearby.md, K1–K11 and the 1.18.33 erratum in docs/opencode/compaction.md): what a
//! conversation adds to the context, computed from `opencode export` data.
//!
//! Every message is its own salsa input, and the session input holds the list of them, so
//! appending one message re-runs the per-message queries for that message only; the
//! session-level queries (history filter, tail selection, pruning) re-run over memoized
//! per-message results.

pub mod compaction;
pub mod convert;
pub mod costs;
pub mod entries;
pub mod export;
pub mod history;
mod race;
pub mod reads;
pub mod runs;

use export::{Part, PartKind, Role};

use crate::prompt::BuildError;

/// Why a session question has no answer.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    /// `--message` names no message of the session.
    #[error("no message {0} in the session")]
    NoMessage(String),
    /// The workspace's config or rules could not be built.
    #[error(transparent)]
    Build(#[from] BuildError),
}

pub use inputs::{Message, Session};

// salsa's input macro generates public constructors and builders that carry no docs and
// cannot be given any (as for `ctxgraph_db::db`); every item written here is documented.
#[allow(missing_docs)]
mod inputs {
    use super::export::{MessageInfo, Part, SessionInfo};

    /// One session: its info and its messages, oldest first.
    #[salsa::input(debug)]
    pub struct Session {
        /// The export's session info.
        #[returns(ref)]
        pub info: SessionInfo,
        /// Its messages, oldest first (appending sets this list).
        #[returns(ref)]
        pub messages: Vec<Message>,
    }

    /// One message of a session, with its parts.
    #[salsa::input(debug)]
    pub struct Message {
        /// The message's `info`.
        #[returns(ref)]
        pub info: MessageInfo,
        /// Its parts, in order.
        #[returns(ref)]
        pub parts: Vec<Part>,
    }
}

impl Message {
    /// The message's id (`msg_…`).
    pub fn id(self, db: &dyn salsa::Database) -> &str {
        &self.info(db).id
    }

    /// The compaction part of a user message (a compaction marker, K6).
    pub fn compaction_part(self, db: &dyn salsa::Database) -> Option<&Part> {
        if self.info(db).role != Role::User {
            return None;
        }
        self.parts(db).iter().find(|p| p.kind() == PartKind::Compaction)
    }

    /// A user message that starts a turn: it has no compaction part.
    pub fn starts_turn(self, db: &dyn salsa::Database) -> bool {
        self.info(db).role == Role::User && self.compaction_part(db).is_none()
    }
}

/// Length of a JavaScript string: UTF-16 code units.
pub fn js_len(text: &str) -> usize {
    text.encode_utf16().count()
}

/// K1: `Math.round(length / 4)`; JavaScript rounds halves up.
pub fn estimate_units(units: usize) -> u64 {
    (units as u64 + 2) / 4
}

/// K1 for a string.
pub fn estimate(text: &str) -> u64 {
    estimate_units(js_len(text))
}

/// The first `limit` UTF-16 code units of `text`, as JavaScript's `slice(0, limit)` gives
/// them. A cut inside a surrogate pair leaves the high surrogate alone in JavaScript;
/// Rust strings cannot hold it, so it becomes U+FFFD, which is what the string turns into
/// once encoded as UTF-8 on the wire.
pub fn js_prefix(text: &str, limit: usize) -> std::borrow::Cow<'_, str> {
    let mut units = 0;
    for (at, ch) in text.char_indices() {
        let width = ch.len_utf16();
        if units + width > limit {
            if units < limit {
                return format!("{}\u{FFFD}", &text[..at]).into();
            }
            return text[..at].into();
        }
        units += width;
    }
    text.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_round_halves_up() {
        assert_eq!(estimate(""), 0);
        assert_eq!(estimate("a"), 0);
        assert_eq!(estimate("ab"), 1);
        assert_eq!(estimate("abcdef"), 2);
        // One astral character is two UTF-16 units.
        assert_eq!(estimate("😀"), 1);
    }

    #[test]
    fn prefixes_count_utf16_units() {
        assert_eq!(js_prefix("abc", 2), "ab");
        assert_eq!(js_prefix("é😀x", 3), "é😀");
        assert_eq!(js_prefix("é😀x", 2), "é\u{FFFD}");
        assert_eq!(js_prefix("abc", 9), "abc");
    }
}
