//! PI10: pi's own text in its system message, its base prompt and the sentences that open
//! the skills listing, belongs to pi. It is never copied into this repository: it is put
//! together from the local installation's own files (the prompt's template in
//! `dist/core/system-prompt.js`, the default tools' one-line descriptions and guidelines in
//! `dist/core/tools/*.js`, the listing's lines in `dist/core/skills.js`) the way pi's code
//! does, and accepted only when its blake3 hash and length match this table, or marked
//! unavailable. The base prompt names the installation's own folder (its README, docs and
//! examples): the table's hash is of the text with that folder written as `<pi>`.

use std::path::PathBuf;

use ctxgraph_db::profile::WordingSource;

/// One text's fingerprint: figures, not text.
struct Fingerprint {
    blake3: &'static str,
    len: usize,
}

/// One release's fingerprints.
struct Release {
    version: &'static str,
    /// The base prompt with the default tools (read, bash, edit, write), its folder as `<pi>`.
    base_prompt: Fingerprint,
    /// The skills listing's opening sentences, joined by newlines.
    skills_intro: Fingerprint,
}

const RELEASES: &[Release] = &[Release {
    version: "0.73.1",
    base_prompt: Fingerprint {
        blake3: "e83006a88cde8393dbc2d8da236db0c1242bd554f499e0eceab74c30f96d7077",
        len: 2086,
    },
    skills_intro: Fingerprint {
        blake3: "3ebe65acb86377675a06359fde7dcfd4d4d2e44d143814f2b7a534805ec21020",
        len: 326,
    },
}];

/// The pi release the recorded cases come from.
pub const RECORDED_VERSION: &str = "0.73.1";

/// The tools pi starts with (`pi -p` without `--tools`), in its order.
const DEFAULT_TOOLS: [&str; 4] = ["read", "bash", "edit", "write"];

/// Where the installation's folder stands in the hashed base prompt.
const PACKAGE_MARK: &str = "<pi>";

/// pi's own text around the rule files.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Wording {
    /// PI7: the base prompt, when no `SYSTEM.md` replaces it.
    pub base_prompt: String,
    /// PI12: the sentences before `<available_skills>`, joined by newlines.
    pub skills_intro: String,
    /// Where they came from.
    pub source: WordingSource,
}

/// The installation's files the wording is put together from, as bytes (the engine reads
/// them; this module only recognises them).
pub struct PackageFiles {
    /// The package folder (`…/@mariozechner/pi-coding-agent`).
    pub dir: PathBuf,
    /// `package.json`'s `version`.
    pub version: Option<String>,
    /// `dist/core/system-prompt.js`.
    pub system_prompt_js: Vec<u8>,
    /// `dist/core/skills.js`.
    pub skills_js: Vec<u8>,
    /// `dist/core/tools/<tool>.js` for each of [`tool_files`]'s tools, in that order.
    pub tools_js: Vec<Vec<u8>>,
}

/// The files of the package the wording is read from, relative to its folder.
pub fn tool_files() -> impl Iterator<Item = String> {
    DEFAULT_TOOLS.iter().map(|tool| format!("dist/core/tools/{tool}.js"))
}

/// `dist/core/system-prompt.js`, relative to the package folder.
pub const SYSTEM_PROMPT_JS: &str = "dist/core/system-prompt.js";
/// `dist/core/skills.js`, relative to the package folder.
pub const SKILLS_JS: &str = "dist/core/skills.js";

impl Wording {
    /// Whether the text holds placeholders rather than pi's words.
    pub fn is_unavailable(&self) -> bool {
        matches!(self.source, WordingSource::Unavailable { .. })
    }

    /// Placeholders, with the reason they are used.
    pub fn unavailable(reason: impl Into<String>) -> Wording {
        Wording {
            base_prompt: "<pi's base prompt: unavailable>".to_owned(),
            skills_intro: "<pi's skills introduction: unavailable>".to_owned(),
            source: WordingSource::Unavailable { reason: reason.into() },
        }
    }

    /// The texts as `<prose:blake3=HASH>`: what `tests/oracle/record-agents.sh` writes into
    /// recorded fixtures in their place.
    ///
    /// # Panics
    ///
    /// Never: [`RECORDED_VERSION`] is in the table (a unit test checks it).
    pub fn fingerprints() -> Wording {
        let release = RELEASES.iter().find(|r| r.version == RECORDED_VERSION).expect("recorded version");
        Wording {
            base_prompt: format!("<prose:blake3={}>", release.base_prompt.blake3),
            skills_intro: format!("<prose:blake3={}>", release.skills_intro.blake3),
            source: WordingSource::Fingerprints,
        }
    }

    /// The wording of the installation whose files are `files`, put together as pi does and
    /// checked against the table.
    ///
    /// # Errors
    ///
    /// Why nothing matched: the version is unknown, a piece is missing, or a hash differs.
    pub fn from_package(files: &PackageFiles) -> Result<Wording, String> {
        let version = files.version.as_deref().ok_or("no version in package.json")?;
        let release = RELEASES
            .iter()
            .find(|r| r.version == version)
            .ok_or_else(|| format!("pi {version}'s wording is not known (known: {RECORDED_VERSION})"))?;
        let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
        let dir = files.dir.to_string_lossy();
        let base = base_prompt(&text(&files.system_prompt_js), &files.tools_js, &dir)?;
        check(&base.replace(dir.as_ref(), PACKAGE_MARK), &release.base_prompt, "base prompt")?;
        let intro = skills_intro(&text(&files.skills_js))?;
        check(&intro, &release.skills_intro, "skills introduction")?;
        Ok(Wording {
            base_prompt: base,
            skills_intro: intro,
            source: WordingSource::Installation { path: files.dir.clone(), version: version.to_owned() },
        })
    }
}

fn check(text: &str, fingerprint: &Fingerprint, what: &str) -> Result<(), String> {
    if text.len() == fingerprint.len && blake3::hash(text.as_bytes()).to_hex().as_str() == fingerprint.blake3
    {
        Ok(())
    } else {
        Err(format!("its {what} is not the one pi {RECORDED_VERSION} writes"))
    }
}

/// The double-quoted string literals of a piece of JavaScript, decoded, in order (the
/// escapes pi's built files use: `\n`, `\t`, `\"`, `\\`, `\'`). Hand-written: no crate here
/// parses JavaScript, and only the literals are needed.
fn string_literals(js: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut chars = js.chars();
    while let Some(c) = chars.next() {
        if c != '"' {
            continue;
        }
        let mut literal = String::new();
        while let Some(c) = chars.next() {
            match c {
                '"' => break,
                '\\' => match chars.next() {
                    Some('n') => literal.push('\n'),
                    Some('t') => literal.push('\t'),
                    Some(other) => literal.push(other),
                    None => break,
                },
                other => literal.push(other),
            }
        }
        found.push(literal);
    }
    found
}

/// The string literals of an array literal whose `[` was just passed, up to its `]` (a `]`
/// inside a literal, as in `edits[]`, does not close it).
fn array_literals(js: &str) -> Vec<String> {
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in js.char_indices() {
        match (in_string, escaped, c) {
            (true, true, _) => escaped = false,
            (true, false, '\\') => escaped = true,
            (_, _, '"') => in_string = !in_string,
            (false, _, ']') => return string_literals(&js[..i]),
            _ => {}
        }
    }
    Vec::new()
}

/// The text of `js` from `open` up to the first `close` after it.
fn between<'a>(js: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let start = js.find(open)? + open.len();
    let end = js[start..].find(close)? + start;
    Some(&js[start..end])
}

/// The base prompt `buildSystemPrompt` writes with the default tools and no extension: the
/// template's text with the tools' list, the guidelines and the installation's paths in.
fn base_prompt(system_prompt_js: &str, tools_js: &[Vec<u8>], dir: &str) -> Result<String, String> {
    let template = between(system_prompt_js, "let prompt = `", "`;").ok_or("no base prompt template")?;
    let mut tools = Vec::new();
    let mut tool_guidelines = Vec::new();
    for (name, js) in DEFAULT_TOOLS.iter().zip(tools_js) {
        let js = String::from_utf8_lossy(js);
        if let Some(snippet) = between(&js, "promptSnippet: ", ",\n").and_then(|s| string_literals(s).pop()) {
            tools.push(format!("- {name}: {snippet}"));
        }
        if let Some(at) = js.find("promptGuidelines: [") {
            tool_guidelines.extend(array_literals(&js[at + "promptGuidelines: [".len()..]));
        }
    }
    // `addGuideline("…")` calls in order: the bash-only one (no grep, find or ls tool), the
    // one for those tools (not taken), then after the tools' own, the two always added.
    let fixed: Vec<String> = system_prompt_js
        .split("addGuideline(\"")
        .skip(1)
        .filter_map(|rest| string_literals(&format!("\"{rest}")).into_iter().next())
        .collect();
    let [bash_only, _, concise, paths] = fixed.as_slice() else {
        return Err("not the four fixed guidelines".to_owned());
    };
    let mut guidelines: Vec<String> = Vec::new();
    for g in std::iter::once(bash_only.clone())
        .chain(tool_guidelines.iter().map(|g| ctxgraph_db::js::js_trim(g).to_owned()))
        .chain([concise.clone(), paths.clone()])
    {
        if !g.is_empty() && !guidelines.contains(&g) {
            guidelines.push(g);
        }
    }
    let guidelines: Vec<String> = guidelines.iter().map(|g| format!("- {g}")).collect();
    let values = [
        ("toolsList", if tools.is_empty() { "(none)".to_owned() } else { tools.join("\n") }),
        ("guidelines", guidelines.join("\n")),
        ("readmePath", format!("{dir}/README.md")),
        ("docsPath", format!("{dir}/docs")),
        ("examplesPath", format!("{dir}/examples")),
    ];
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find("${") {
        out.push_str(&rest[..open]);
        let close = rest[open..].find('}').ok_or("an unclosed ${ in the template")? + open;
        let name = &rest[open + 2..close];
        let value =
            values.iter().find(|(n, _)| *n == name).ok_or_else(|| format!("an unknown ${{{name}}}"))?;
        out.push_str(&value.1);
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// `formatSkillsForPrompt`'s opening lines (the first three of its `lines`), without the
/// blank line the first one starts with.
fn skills_intro(skills_js: &str) -> Result<String, String> {
    let lines = between(skills_js, "const lines = [", "];").ok_or("no skills listing lines")?;
    let literals = string_literals(lines);
    let intro = literals.get(..3).ok_or("fewer than three lines")?.join("\n");
    Ok(intro.strip_prefix("\n\n").unwrap_or(&intro).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recorded_release_is_in_the_table() {
        assert!(Wording::fingerprints().base_prompt.starts_with("<prose:blake3=e830"));
    }

    #[test]
    fn literals_and_templates_are_read_and_a_mismatch_is_refused() {
        assert_eq!(string_literals(r#"x("a\"b", 'c', "d\ne")"#), ["a\"b", "d\ne"]);
        assert_eq!(array_literals(r#""edits[] \"x\"", "b"], "c""#), ["edits[] \"x\"", "b"]);
        let js = "let prompt = `Tools:\n${toolsList}\n${guidelines} ${readmePath}`;".to_owned()
            + r#"addGuideline("B"); addGuideline("G"); addGuideline("C"); addGuideline("P");"#;
        let tool = b"promptSnippet: \"Read\",\n promptGuidelines: [\"Use read.\"],".to_vec();
        let text = base_prompt(&js, &[tool], "/pkg").expect("fills");
        assert_eq!(text, "Tools:\n- read: Read\n- B\n- Use read.\n- C\n- P /pkg/README.md");
        let files = PackageFiles {
            dir: "/pkg".into(),
            version: Some(RECORDED_VERSION.to_owned()),
            system_prompt_js: js.into_bytes(),
            skills_js: b"const lines = [\"\\n\\nA\", \"B\", \"C\", \"\"];".to_vec(),
            tools_js: Vec::new(),
        };
        assert!(Wording::from_package(&files).unwrap_err().contains("base prompt"));
        assert_eq!(skills_intro("const lines = [\"\\n\\nA\", \"B\", \"C\", \"\"];").unwrap(), "A\nB\nC");
    }
}
