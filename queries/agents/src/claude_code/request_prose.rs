//! CC16: Claude Code's own texts in its whole first request (identity line, system prompt,
//! the listings' opening and closing sentences, its built-in agents' and bundled skills'
//! entries, the token budget, the attribution). They are Claude Code's and never copied into
//! this repository: recorded fixtures and `check` keep them as `<prose:blake3=…>` tokens from
//! this table (figures, not text); without them the text holds marked placeholders.
//! ctxgraph does not yet read these texts from an installation (the system prompt and the
//! listings are assembled by Claude Code's code, not single strings of its bundle).

use ctxgraph_db::profile::WordingSource;

use super::RECORDED_VERSION;

/// blake3 of each text, as recorded from Claude Code 2.1.332 (`tests/oracle/cc_request.py`
/// with `CC_PIECES=1` prints them).
mod hashes {
    pub const IDENTITY: &str = "2a1b241971dddcdb137b1e197838bae1045b11162dabb045662ecb6bcdd6228c";
    pub const IDENTITY_APPENDED: &str = "633614dc6542d9d3f305b4bdca80cc0b72fb5651207e042b4bad6b566c96c57a";
    pub const SYSTEM_PROMPT: &str = "c6c46c433d1f079d418866ddf248f033172fe640c8c4b8428e8234400f484f27";
    pub const SYSTEM_PROMPT_STYLE: &str = "73f54acbfe76a13011a2df5a5eba9c3d305581a148cfa09782aa2d6b48243ac5";
    pub const SYSTEM_PROMPT_NO_SKILLS: &str =
        "ac17e342a81a7587afb53aa135831c02c4624183babcc1b9c5c1ca5e6c1aa266";
    pub const SYSTEM_PROMPT_STYLE_CODING: &str =
        "0b78bc65e811dc782984d01adb17f85d3c1706def477b3fe66464cd92416032e";
    /// The built-in output styles' texts recorded (the others are not).
    pub const BUILTIN_STYLES: [(&str, &str); 1] =
        [("Explanatory", "6047cfe7f4ed39f156eee0338d0a1d4ded4ac7f86bbb13350a6dadca8b053140")];
    pub const DEFERRED_TOOLS: &str = "f0e0a0099145c2be2097d7f6270e0472c2a340c2ae2a834d488271832f8dd6c0";
    pub const DEFERRED_TOOLS_OPEN: &str = "e101f2a241321c0df4a98e483107d8b715ee476e349a5105b8d4ac75df6651dd";
    pub const MCP_HEADING: &str = "19551780355b09cd0a5902f8350b91a291d132a2e1fd925227cbbbe074fda5fd";
    pub const AGENTS_HEADER: &str = "012cdc52e3156e89216b8d3dc0f0fcbddcb83f3b179df2bf64e4830a522c3420";
    pub const AGENTS_FOOTER: &str = "cc00d11c792651cdbd28a7c19147ada22d54a0ab5d4536570e1760de7f282786";
    pub const SKILLS_HEADER: &str = "65e2b6e137cdf9f23c43334f0f91b35ae1b013760fc04e3686acc210a1cde41f";
    pub const SKILL_FALLBACK: &str = "4e8f14ee874d0a6871c840fee8cecff4553fb53e1d09c62b843ed1e0d38e56be";
    pub const STYLE_HEADING: &str = "6bfd8d368def10244cc6bbbff7e47541ab0752ce2fda0d82df2ef56ad4203bec";
    pub const STYLE_ACTIVE: &str = "92cc9a117754ce456e7f1d170ad27199ebfdbf9c49a99a1beaac499e0084be69";
    pub const TOTAL_TOKENS: &str = "2e58f018aa14911a8765762622bb0a407b9e50ba9cdfb42f145cdfa01f7c01fc";
    pub const NEW_SKILLS: [&str; 2] = [
        "09d5378af3e926a64a3334a46b01de2000b77f92f75c86d7f8f712099fb6c0fe",
        "9e2aa871b2f7262a16b2999306e9a31a748eb85731ed3b753d1f7c5043e5051b",
    ];
    pub const FROM_FOLDER: [&str; 2] = [
        "5109a797437255f2cbf58c8674c0e78f181d7e0f9c2f6b08a8a66deb8b204f41",
        "69abca5d698e0141cb2984e2bfdbca651a8a79181294078d33cdb916e587ff74",
    ];
    pub const ATTRIBUTION: &str = "0cd3a35770da6523e34c215830ac12f18e1e52a679193e6295e77ec7a995632f";
    /// The built-in agents: their names (which place them in the sorted list, CC18) and
    /// the hash of each one's whole line.
    pub const BUILTIN_AGENTS: [(&str, &str); 5] = [
        ("claude", "03b0cf90b04d2a18bebb6dd18fcebc56d4c44a3c39af3dbb6ee1e138aa67717e"),
        ("Explore", "847d99c69f2ac77bca64e67161eb76d2530bfd70bd8cf55c5106ad487f12c683"),
        ("general-purpose", "92303c51118939dfebd4c006ee91e1bb34212bb6fbcfb86e12b8b69ffdd742bb"),
        ("Plan", "414c3b06e8464b36099b99003b2923f8f62f3e2049317c58a26866154d85f8e1"),
        ("statusline-setup", "dc04188b45900b113b873e1cfd21e03991b0524a5e1212d101700c210ea54727"),
    ];
}

/// CC17: one skill bundled with Claude Code, as its skill list carries it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Bundled {
    /// Its name (a project's entry of that name replaces it).
    pub name: &'static str,
    /// blake3 of its whole entry (`- NAME: DESCRIPTION`).
    hash: &'static str,
    /// The entry's length in UTF-16 code units, as JavaScript counts: what the skill list's
    /// budget counts.
    pub len: usize,
    /// Whether the budget always leaves its description (a bundled skill proper); `init` and
    /// `security-review` are Claude Code's built-in commands, whose descriptions the budget
    /// can drop like a project's.
    pub fixed: bool,
}

/// Claude Code 2.1.332's bundled skills, in its order (recorded with `cc_request.py`).
pub const BUNDLED: [Bundled; 13] = [
    Bundled {
        name: "dataviz",
        hash: "227a908e1283d0fc522653fcbacd99a213d7c2708f88b959f8eafe4e650060e8",
        len: 1447,
        fixed: true,
    },
    Bundled {
        name: "update-config",
        hash: "50b3da4a841505988dfcc660655d40588dbec284e8c54a2101911aeb79366c4f",
        len: 707,
        fixed: true,
    },
    Bundled {
        name: "keybindings-help",
        hash: "089b37ac5466206be28f70b97e139739a47ad9d0d66d1d57719063e86067df84",
        len: 248,
        fixed: true,
    },
    Bundled {
        name: "code-review",
        hash: "eaa4586de32c973c7460e5a589c9863a0fcb4233a7d05439abb144a91f0c28d0",
        len: 850,
        fixed: true,
    },
    Bundled {
        name: "simplify",
        hash: "836c1cf73bc3fc751d96d30167962af97d4418a198ebad0ef040ee378efeda05",
        len: 188,
        fixed: true,
    },
    Bundled {
        name: "fewer-permission-prompts",
        hash: "d34f357598266794c93834db0c4599c6cf0001b184cf9a806c5202f821c3c036",
        len: 191,
        fixed: true,
    },
    Bundled {
        name: "loop",
        hash: "239f2820879c0c82052fde30cda123b1011d01d072803bb7647a2e756839fb87",
        len: 344,
        fixed: true,
    },
    Bundled {
        name: "claude-api",
        hash: "e507735682eb6fbb81349809dde9ae84f53d783c718082584bfeb7c87b9d313c",
        len: 1171,
        fixed: true,
    },
    Bundled {
        name: "workflow-authoring",
        hash: "bfafab143c8933bc26694d3a0337d13c4ce751fb387e978f89dda371a7ea6b79",
        len: 252,
        fixed: true,
    },
    Bundled {
        name: "run",
        hash: "dc501a46c10d220b6b9a93b6233cb472471ecf6fb36f8945d832071ffa25f2a2",
        len: 368,
        fixed: true,
    },
    Bundled {
        name: "plugin-authoring",
        hash: "3632d803327437647e3971de4bd331905647b4cf74a32b4e627c53070aa83c24",
        len: 275,
        fixed: true,
    },
    Bundled {
        name: "init",
        hash: "7414b2147e5645116b5a13ac43e50913c9224123b538b5cfea9360cc7bb7fb26",
        len: 67,
        fixed: false,
    },
    Bundled {
        name: "security-review",
        hash: "ae6921b6f3280629bfd505f6e8ca04cd00341290be6e2d0e55ac6228147d40f4",
        len: 90,
        fixed: false,
    },
];

/// Claude Code's own texts of its first request, each as sent (or its stand-in).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RequestProse {
    /// The system message's identity line, without and with `--append-system-prompt` (CC20).
    pub identity: [String; 2],
    /// The system prompt: without an output style, with one, and with one that keeps the
    /// coding instructions (CC19); `<memory>` where it names the auto-memory folder.
    pub system_prompt: [String; 3],
    /// The system prompt with `--disable-slash-commands` (CC20).
    pub system_prompt_no_skills: String,
    /// Claude Code's built-in output styles' texts, by name (CC19).
    pub builtin_styles: Vec<(&'static str, String)>,
    /// The deferred-tools block, whole (no MCP server).
    pub deferred_tools: String,
    /// The deferred-tools block up to its last built-in tool's line: the MCP servers' tool
    /// names follow, then the closing tag (CC22).
    pub deferred_tools_open: String,
    /// The MCP instructions block's opening, before the first server's heading (CC22).
    pub mcp_heading: String,
    /// The agent list's opening line and closing sentence (CC18).
    pub agents_header: String,
    /// See [`RequestProse::agents_header`].
    pub agents_footer: String,
    /// The built-in agents, by name, each with its whole line.
    pub builtin_agents: Vec<(&'static str, String)>,
    /// The skill list's opening line (CC17).
    pub skills_header: String,
    /// Each bundled skill's whole entry, in [`BUNDLED`]'s order, after the project's.
    pub skills_bundled: Vec<String>,
    /// The description of a skill that has none and no text.
    pub skill_fallback: String,
    /// `# Output Style: ` before the style's name (CC19).
    pub style_heading: String,
    /// What follows the style's name in the reminder that it is active.
    pub style_active: String,
    /// The token-budget block, whole.
    pub total_tokens: String,
    /// The attribution block, whole.
    pub attribution: String,
    /// CC21: the text before and after the skills folder in the reminder a Read adds when it
    /// finds one.
    pub new_skills: [String; 2],
    /// CC21: the text before the skills folder after a found skill's description, and
    /// between it and the folder it applies to.
    pub from_folder: [String; 2],
    /// Where they came from.
    pub source: WordingSource,
}

/// Each built-in style's text: `known`'s, else a placeholder saying it was not recorded.
fn builtin_styles(known: impl Fn(&str) -> Option<String>) -> Vec<(&'static str, String)> {
    super::listing::BUILTIN_STYLES
        .iter()
        .map(|&name| {
            let text = known(name).unwrap_or_else(|| {
                format!("<Claude Code's built-in output style {name}: not recorded, not reproduced>")
            });
            (name, text)
        })
        .collect()
}

/// The texts that are single string literals of Claude Code's bundle, by name, with their
/// length in bytes and blake3: what [`RequestProse::with_literals`] takes from an
/// installation. The others are assembled by Claude Code's code and are not read.
const LITERALS: [(&str, usize, &str); 5] = [
    ("identity", 62, hashes::IDENTITY),
    ("identity-appended", 94, hashes::IDENTITY_APPENDED),
    ("agents-header", 41, hashes::AGENTS_HEADER),
    ("agents-footer", 133, hashes::AGENTS_FOOTER),
    ("skill-fallback", 5, hashes::SKILL_FALLBACK),
];

/// `LITERALS` as `js_literals::extract` takes them.
pub fn literal_table() -> std::collections::BTreeMap<String, ctxgraph_db::installation::AssetRecord> {
    LITERALS
        .iter()
        .map(|(name, bytes, hash)| {
            (
                (*name).to_owned(),
                ctxgraph_db::installation::AssetRecord { bytes: *bytes, blake3: (*hash).to_owned() },
            )
        })
        .collect()
}

impl RequestProse {
    /// Placeholders, except the texts `found` in an installation (by [`literal_table`]'s
    /// names); the reason says which came from where.
    pub fn with_literals(
        found: &std::collections::BTreeMap<String, std::sync::Arc<str>>,
        path: &std::path::Path,
    ) -> RequestProse {
        let names: Vec<&str> =
            LITERALS.iter().map(|(n, _, _)| *n).filter(|n| found.contains_key(*n)).collect();
        let mut prose = RequestProse::unavailable(format!(
            "{} of Claude Code's {} single-string texts of the whole request read from {} ({}); the system prompt, the listings' other sentences, the built-in entries and the other blocks are assembled by Claude Code's code and not read: placeholders (CC16)",
            names.len(),
            LITERALS.len(),
            path.display(),
            if names.is_empty() { "none".to_owned() } else { names.join(", ") }
        ));
        let text = |name: &str| found.get(name).map(std::string::ToString::to_string);
        if let Some(t) = text("identity") {
            prose.identity[0] = t;
        }
        if let Some(t) = text("identity-appended") {
            prose.identity[1] = t;
        }
        let fields = [
            ("agents-header", &mut prose.agents_header),
            ("agents-footer", &mut prose.agents_footer),
            ("skill-fallback", &mut prose.skill_fallback),
        ];
        for (name, field) in fields {
            if let Some(t) = text(name) {
                *field = t;
            }
        }
        prose
    }

    /// Each text as `<prose:blake3=HASH>`: what recorded fixtures keep.
    pub fn fingerprints() -> RequestProse {
        let t = |hash: &str| format!("<prose:blake3={hash}>");
        RequestProse {
            identity: [t(hashes::IDENTITY), t(hashes::IDENTITY_APPENDED)],
            system_prompt: [
                t(hashes::SYSTEM_PROMPT),
                t(hashes::SYSTEM_PROMPT_STYLE),
                t(hashes::SYSTEM_PROMPT_STYLE_CODING),
            ],
            system_prompt_no_skills: t(hashes::SYSTEM_PROMPT_NO_SKILLS),
            builtin_styles: builtin_styles(|name| {
                hashes::BUILTIN_STYLES.iter().find(|(n, _)| *n == name).map(|(_, h)| t(h))
            }),
            deferred_tools: t(hashes::DEFERRED_TOOLS),
            deferred_tools_open: t(hashes::DEFERRED_TOOLS_OPEN),
            mcp_heading: t(hashes::MCP_HEADING),
            agents_header: t(hashes::AGENTS_HEADER),
            agents_footer: t(hashes::AGENTS_FOOTER),
            builtin_agents: hashes::BUILTIN_AGENTS.iter().map(|(name, hash)| (*name, t(hash))).collect(),
            skills_header: t(hashes::SKILLS_HEADER),
            skills_bundled: BUNDLED.iter().map(|b| t(b.hash)).collect(),
            skill_fallback: t(hashes::SKILL_FALLBACK),
            style_heading: t(hashes::STYLE_HEADING),
            style_active: t(hashes::STYLE_ACTIVE),
            total_tokens: t(hashes::TOTAL_TOKENS),
            attribution: t(hashes::ATTRIBUTION),
            new_skills: hashes::NEW_SKILLS.map(t),
            from_folder: hashes::FROM_FOLDER.map(t),
            source: WordingSource::Fingerprints,
        }
    }

    /// Marked placeholders, with the reason.
    pub fn unavailable(reason: impl Into<String>) -> RequestProse {
        let p = |what: &str| format!("<Claude Code's {what}: not reproduced>");
        RequestProse {
            identity: [p("identity line"), p("identity line with an appended system prompt")],
            system_prompt: [
                p("system prompt"),
                p("system prompt for an output style"),
                p("system prompt for an output style that keeps the coding instructions"),
            ],
            system_prompt_no_skills: p("system prompt without skills"),
            builtin_styles: builtin_styles(|_| None),
            deferred_tools: p("deferred-tools block"),
            deferred_tools_open: p("deferred-tools block, before the MCP tools"),
            mcp_heading: p("MCP instructions heading"),
            agents_header: p("agent list's opening line"),
            agents_footer: p("agent list's closing sentence"),
            builtin_agents: hashes::BUILTIN_AGENTS
                .iter()
                .map(|(name, _)| (*name, p(&format!("built-in agent {name}"))))
                .collect(),
            skills_header: p("skill list's opening line"),
            skills_bundled: BUNDLED.iter().map(|b| p(&format!("bundled skill {}", b.name))).collect(),
            skill_fallback: p("default skill description"),
            style_heading: p("output style heading"),
            style_active: p("reminder that the output style is active"),
            total_tokens: p("token budget block"),
            attribution: p("attribution block"),
            new_skills: [p("announcement of new skills"), p("end of the announcement")],
            from_folder: [p("folder note of a found skill"), p("where the found skill applies")],
            source: WordingSource::Unavailable { reason: reason.into() },
        }
    }

    /// Placeholders for an installation whose rule-file wording was read: these texts are
    /// not read from it yet.
    pub fn not_read() -> RequestProse {
        RequestProse::unavailable(format!(
            "ctxgraph does not read the whole request's texts from an installation yet (recorded from Claude Code {RECORDED_VERSION}): placeholders (CC16)"
        ))
    }
}
