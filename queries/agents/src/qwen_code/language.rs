//! QW3: the output-language file. Qwen Code writes `~/.qwen/output-language.md` itself at
//! start-up (from `general.outputLanguage`) unless the file already names a language in its
//! marker comment, and sends it as a context file after the walk; a working directory's own
//! `.qwen/output-language.md` is sent instead when it exists.
//!
//! The text Qwen writes is Qwen's own wording: never copied into this repository. It is read
//! from the installed package (two template literals) and accepted only when their blake3
//! hash and length match `RELEASES`; otherwise the block holds a marked placeholder.

use std::sync::LazyLock;

use regex::Regex;

/// The marker comment's prefix (a format fact: Qwen finds the language by it).
pub const MARKER_PREFIX: &str = "qwen-code:llm-output-language:";

/// The languages Qwen knows by code, locale id and name (`fr`, `fr-FR`, `French`): facts of
/// its language table, used to turn a setting into the name its file states.
const LANGUAGES: &[(&str, &str, &str, &str)] = &[
    ("en", "en-US", "English", "English"),
    ("zh-TW", "zh-TW", "Traditional Chinese", "\u{7E41}\u{9AD4}\u{4E2D}\u{6587}"),
    ("zh", "zh-CN", "Chinese", "\u{4E2D}\u{6587}"),
    ("ru", "ru-RU", "Russian", "\u{0420}\u{0443}\u{0441}\u{0441}\u{043A}\u{0438}\u{0439}"),
    ("de", "de-DE", "German", "Deutsch"),
    ("ja", "ja-JP", "Japanese", "\u{65E5}\u{672C}\u{8A9E}"),
    ("pt", "pt-BR", "Portuguese", "Portugu\u{EA}s"),
    ("fr", "fr-FR", "French", "Fran\u{E7}ais"),
    ("ca", "ca-ES", "Catalan", "Catal\u{E0}"),
];

/// A figure of one template: blake3 and length of its source in the bundle.
#[derive(Clone, Copy, Debug)]
struct Fingerprint {
    blake3: &'static str,
    len: usize,
}

/// The fingerprints of one Qwen Code release.
struct Release {
    version: &'static str,
    /// The text written for `auto`.
    auto: Fingerprint,
    /// The text written for a named language.
    fixed: Fingerprint,
    /// The `auto` text as Qwen writes it, trimmed: what recorded fixtures keep as a token.
    auto_written: Fingerprint,
    /// The text written for each language the recorded cases name, trimmed (blake3 by the
    /// language's English name): the tokens their fixtures keep.
    fixed_written: &'static [(&'static str, &'static str)],
}

const RELEASES: &[Release] = &[Release {
    version: "0.24.4",
    auto: Fingerprint {
        blake3: "28616a8abcd3ac61b84e0c2a4476a99d0d56e39f5cb3c3492dc6ce969911e80b",
        len: 885,
    },
    fixed: Fingerprint {
        blake3: "89736dff49214ea13aa38199a41eb99b15521752593d2e3e3a499358e82f2971",
        len: 863,
    },
    auto_written: Fingerprint {
        blake3: "793b5cce51f21f42a2e97b71adf8e676df18b473d9033cf43052b964b7859b41",
        len: 840,
    },
    fixed_written: &[
        ("French", "c88c1a465fdb2632296f12dfc58a7b2a7c9548481dcc4b62a757731ca4bf4d89"),
        ("Chinese", "d9eb0def9d5dfcaa81babf89abd75ee59182b952cf999a143335b39eb57191c2"),
    ],
}];

/// The release the recorded cases come from.
pub const RECORDED_VERSION: &str = "0.24.4";

/// Where Qwen's wording came from: Claude Code's three cases (installation, fingerprints,
/// unavailable).
use ctxgraph_db::profile::WordingSource;

/// One piece of a template.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Piece {
    Text(String),
    Language,
    SafeLanguage,
}

/// Qwen's wording for its output-language file.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Wording {
    auto: Vec<Piece>,
    fixed: Vec<Piece>,
    /// Where it came from.
    pub source: WordingSource,
}

impl Wording {
    /// Placeholders, with why.
    pub fn unavailable(reason: impl Into<String>) -> Wording {
        Wording {
            auto: Vec::new(),
            fixed: Vec::new(),
            source: WordingSource::Unavailable { reason: reason.into() },
        }
    }

    /// Tokens instead of the text (what fixtures and `check` snapshots keep).
    pub fn fingerprints() -> Wording {
        Wording { auto: Vec::new(), fixed: Vec::new(), source: WordingSource::Fingerprints }
    }

    /// Whether the text holds placeholders.
    pub fn is_unavailable(&self) -> bool {
        matches!(self.source, WordingSource::Unavailable { .. })
    }

    /// QW3: the file Qwen writes for `language` (`None`: auto), trimmed as the context block
    /// carries it.
    pub fn written(&self, language: Option<&str>) -> String {
        match &self.source {
            WordingSource::Installation { .. } => {
                let pieces = if language.is_some() { &self.fixed } else { &self.auto };
                let language = language.unwrap_or("auto");
                let text: String = pieces
                    .iter()
                    .map(|piece| match piece {
                        Piece::Text(text) => text.clone(),
                        Piece::Language => language.to_owned(),
                        Piece::SafeLanguage => safe_for_marker(language),
                    })
                    .collect();
                ctxgraph_db::js::js_trim(&text).to_owned()
            }
            WordingSource::Fingerprints => {
                let release = recorded();
                let known = match language {
                    None => Some(release.auto_written.blake3),
                    Some(language) => release
                        .fixed_written
                        .iter()
                        .find(|(name, _)| *name == language)
                        .map(|(_, hash)| *hash),
                };
                match (known, language) {
                    (Some(hash), _) => format!("<prose:blake3={hash}>"),
                    // A language no recording names: no hash to stand for the text.
                    (None, language) => {
                        format!("<prose:qwen-output-language:{}>", language.unwrap_or("auto"))
                    }
                }
            }
            // `None` is never a wording's source; it reads as unavailable.
            WordingSource::Unavailable { .. } | WordingSource::None => format!(
                "<output-language file for {}: Qwen Code's wording unavailable>",
                language.unwrap_or("auto")
            ),
        }
    }

    /// Finds the two templates in a chunk of Qwen's bundle (by the function that returns
    /// them, a code shape) and keeps them only when they match a release's fingerprints.
    pub fn from_bundle(bundle: &[u8], path: &std::path::Path, version: Option<&str>) -> Option<Wording> {
        static LITERAL: LazyLock<regex::bytes::Regex> = LazyLock::new(|| {
            regex::bytes::Regex::new(r"return `((?:[^`\\]|\\.)*)`;").expect("valid pattern")
        });
        let anchor = b"function generateOutputLanguageFileContent(";
        let at = bundle.windows(anchor.len()).position(|w| w == anchor)?;
        let window = &bundle[at..(at + 8192).min(bundle.len())];
        let literals: Vec<&[u8]> =
            LITERAL.captures_iter(window).take(2).filter_map(|c| c.get(1)).map(|m| m.as_bytes()).collect();
        let [auto, fixed] = literals.as_slice() else { return None };
        let release = RELEASES
            .iter()
            .filter(|r| version.is_none_or(|v| v == r.version))
            .find(|r| fits(&r.auto, auto) && fits(&r.fixed, fixed))?;
        Some(Wording {
            auto: pieces(auto)?,
            fixed: pieces(fixed)?,
            source: WordingSource::Installation {
                path: path.to_path_buf(),
                version: release.version.to_owned(),
            },
        })
    }
}

fn recorded() -> &'static Release {
    RELEASES.iter().find(|r| r.version == RECORDED_VERSION).unwrap_or(&RELEASES[0])
}

fn fits(fingerprint: &Fingerprint, text: &[u8]) -> bool {
    text.len() == fingerprint.len && blake3::hash(text).to_hex().as_str() == fingerprint.blake3
}

/// A template literal's source as pieces: JavaScript escapes decoded, `${…}` as the
/// language, its marker-safe form, or the two constants it names.
fn pieces(source: &[u8]) -> Option<Vec<Piece>> {
    let source = std::str::from_utf8(source).ok()?;
    let mut out = Vec::new();
    let mut text = String::new();
    let mut chars = source.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '$' if chars.peek() == Some(&'{') => {
                chars.next();
                let name: String = chars.by_ref().take_while(|&c| c != '}').collect();
                let piece = match name.trim() {
                    "language" => Piece::Language,
                    "safeLanguage" => Piece::SafeLanguage,
                    "OUTPUT_LANGUAGE_AUTO" => Piece::Text("auto".to_owned()),
                    "LLM_OUTPUT_LANGUAGE_MARKER_PREFIX" => Piece::Text(MARKER_PREFIX.to_owned()),
                    _ => return None,
                };
                out.push(Piece::Text(std::mem::take(&mut text)));
                out.push(piece);
            }
            '\\' => match chars.next()? {
                'n' => text.push('\n'),
                't' => text.push('\t'),
                'u' => {
                    let hex: String = chars.by_ref().take(4).collect();
                    text.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                }
                'x' => {
                    let hex: String = chars.by_ref().take(2).collect();
                    text.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                }
                other => text.push(other),
            },
            other => text.push(other),
        }
    }
    out.push(Piece::Text(text));
    Some(out)
}

/// The language as Qwen writes it into its marker comment (line breaks as spaces, no `--`).
fn safe_for_marker(language: &str) -> String {
    language.replace(['\r', '\n'], " ").replace("--!>", "").replace("-->", "").replace("--", "")
}

/// QW3: `general.outputLanguage` → the language the written file names, `None` for auto
/// (unset, empty or `auto` in any case). A known name, code or locale (`fr`, `zh_CN.UTF-8`)
/// becomes the language's English name; anything else is written as given.
pub fn resolve(setting: Option<&str>) -> Option<String> {
    let setting = setting.filter(|s| !s.is_empty() && !s.eq_ignore_ascii_case("auto"))?;
    let normalized = setting.trim().replace('_', "-").to_lowercase();
    if let Some(&(_, _, name, _)) = LANGUAGES.iter().find(|l| l.2.to_lowercase() == normalized) {
        return Some(name.to_owned());
    }
    let token_len = |token: &str| {
        let token = token.to_lowercase();
        let hit = normalized == token
            || [b'-', b'.', b'@'].iter().any(|&sep| {
                normalized.len() > token.len()
                    && normalized.starts_with(&token)
                    && normalized.as_bytes()[token.len()] == sep
            });
        hit.then_some(token.len())
    };
    if !LANGUAGES.iter().any(|&(code, id, _, _)| token_len(code).is_some() || token_len(id).is_some()) {
        return Some(setting.to_owned());
    }
    // The locale's language: an exact name wins, else the longest matching code or id.
    let mut best: Option<(&str, usize)> = None;
    for &(code, id, name, native) in LANGUAGES {
        if normalized == name.to_lowercase() || normalized == native.to_lowercase() {
            return Some(name.to_owned());
        }
        if let Some(len) = token_len(id).or_else(|| token_len(code))
            && best.is_none_or(|(_, l)| len > l)
        {
            best = Some((name, len));
        }
    }
    Some(best.map_or("English", |(name, _)| name).to_owned())
}

/// QW3: the language a file names in its marker comment (or in an older heading form), if
/// any: Qwen keeps such a file as it is.
pub fn marked_language(content: &str) -> Option<String> {
    static MARKER: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(&format!(r"(?i)<!--\s*{}\s*(.*?)\s*-->", regex::escape(MARKER_PREFIX)))
            .expect("valid pattern")
    });
    static HEADING: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?im)^#.*?CRITICAL:\s*(.*?)\s+Output Language Rule\b").expect("valid pattern")
    });
    [&*MARKER, &*HEADING]
        .iter()
        .find_map(|re| re.captures(content).and_then(|c| c.get(1)).map(|m| m.as_str().trim().to_owned()))
        .filter(|l| !l.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_become_language_names() {
        assert_eq!(resolve(None), None);
        assert_eq!(resolve(Some("AUTO")), None);
        assert_eq!(resolve(Some("fr")).as_deref(), Some("French"));
        assert_eq!(resolve(Some("zh_CN.UTF-8")).as_deref(), Some("Chinese"));
        assert_eq!(resolve(Some("zh-TW")).as_deref(), Some("Traditional Chinese"));
        assert_eq!(resolve(Some("german")).as_deref(), Some("German"));
        assert_eq!(resolve(Some(" Klingon ")).as_deref(), Some(" Klingon "));
    }

    #[test]
    fn markers() {
        assert_eq!(
            marked_language("x\n<!--   qwen-code:llm-output-language:   Klingon   -->").as_deref(),
            Some("Klingon")
        );
        assert_eq!(marked_language("no marker"), None);
    }

    #[test]
    fn a_bundle_with_other_words_is_refused() {
        let bundle = b"function generateOutputLanguageFileContent(l) { return `a ${language}`; return `b`; }";
        assert!(Wording::from_bundle(bundle, std::path::Path::new("/b"), None).is_none());
    }
}
