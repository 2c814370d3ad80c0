//! V1–V3: `{env:NAME}` and `{file:PATH}` in config text, before parsing.

use std::path::{Path, PathBuf};

use ctxgraph_db::js::js_trim;
use ctxgraph_db::path;

/// Why substitution failed. Both carry the token as written.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SubstitutionError {
    /// V2: the referenced file does not exist.
    Missing {
        /// The `{file:…}` token as written.
        token: String,
        /// The path it names, resolved.
        resolved: PathBuf,
        /// Where the token starts in the text as written.
        offset: usize,
    },
    /// V2: any other read error.
    Unreadable {
        /// The `{file:…}` token as written.
        token: String,
        /// The path it names, resolved.
        resolved: PathBuf,
        /// The read error, in words.
        reason: String,
        /// Where the token starts in the text as written.
        offset: usize,
    },
}

impl SubstitutionError {
    fn with_offset(self, map: impl Fn(usize) -> usize) -> Self {
        match self {
            SubstitutionError::Missing { token, resolved, offset } => {
                SubstitutionError::Missing { token, resolved, offset: map(offset) }
            }
            SubstitutionError::Unreadable { token, resolved, reason, offset } => {
                SubstitutionError::Unreadable { token, resolved, reason, offset: map(offset) }
            }
        }
    }
}

/// An offset in substituted text, back in the text as written: inside an inserted value,
/// the start of its token (a position is never shown inside a substituted value).
/// `substitutions` are those that produced the text, in output order.
pub fn written_offset(offset: usize, substitutions: &[Substitution]) -> usize {
    let mut shift: isize = 0;
    for sub in substitutions {
        if sub.output.contains(&offset) {
            return sub.input.start;
        }
        if sub.output.end <= offset {
            shift += sub.input.len().cast_signed() - sub.output.len().cast_signed();
        }
    }
    offset.saturating_add_signed(shift)
}

/// A value that came in through substitution, for provenance and secret hiding.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Substitution {
    /// The `{env:…}` or `{file:…}` token as written.
    pub token: String,
    /// Byte range of the inserted text in the substituted output.
    pub output: std::ops::Range<usize>,
    /// Byte range of the token in the text as written.
    pub input: std::ops::Range<usize>,
}

/// What substitution reads from outside the text: variables, files and the directories
/// relative paths start from.
pub struct Context<'a> {
    /// Looks a variable up (the well-known overlay first, then the process environment).
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// Reads a file for `{file:}`: `Ok(None)` when it does not exist.
    pub read: &'a dyn Fn(&Path) -> Result<Option<String>, String>,
    /// The directory relative `{file:}` paths resolve against.
    pub dir: &'a Path,
    /// `os.homedir()` for `{file:~/…}`.
    pub os_home: &'a Path,
}

/// Applies V1 then V2 to `text`. The returned substitutions locate every inserted text in
/// the output, with the token as the user wrote it.
pub fn substitute(text: &str, cx: &Context<'_>) -> Result<(String, Vec<Substitution>), SubstitutionError> {
    let mut env_subs = Vec::new();
    let with_env =
        replace_tokens(text, "{env:", |name, _| Ok((cx.env)(name).unwrap_or_default()), &mut env_subs)?;
    let mut file_subs = Vec::new();
    let out = replace_tokens(
        &with_env,
        "{file:",
        |raw, (line_start, token_start)| {
            // V2: skipped when its line (trimmed of leading whitespace) starts with `//`.
            if with_env[line_start..token_start].trim_start().starts_with("//") {
                return Err(None);
            }
            let resolve = |raw: &str| match raw.strip_prefix("~/") {
                Some(rest) => cx.os_home.join(rest),
                None => path::resolve(cx.dir, raw),
            };
            let resolved = resolve(raw);
            match (cx.read)(&resolved) {
                Ok(Some(content)) => {
                    let json = serde_json::to_string(js_trim(&content)).unwrap_or_default();
                    Ok(json[1..json.len() - 1].to_owned())
                }
                failed => {
                    // Errors name the file as written: an `{env:}` inside the path stays a
                    // token, in the token and in the resolved path.
                    let end = token_start + "{file:".len() + raw.len() + 1;
                    let token = unsubstitute(&with_env, token_start..end, &env_subs);
                    // A `{file:}` token that an `{env:}` value produced has no written form
                    // of its own: unsubstituting gives the env token, which then stands for
                    // the path (found by the fuzz target; slicing it as `{file:…}` panicked).
                    let written_raw =
                        token.strip_prefix("{file:").and_then(|t| t.strip_suffix('}')).unwrap_or(&token);
                    let resolved = if written_raw == raw { resolved } else { resolve(written_raw) };
                    Err(Some(match failed {
                        Err(reason) => {
                            SubstitutionError::Unreadable { token, resolved, reason, offset: token_start }
                        }
                        _ => SubstitutionError::Missing { token, resolved, offset: token_start },
                    }))
                }
            }
        },
        &mut file_subs,
    )
    .map_err(|err| err.with_offset(|offset| written_offset(offset, &env_subs)))?;
    // Env outputs were located in the intermediate text: shift them past the file
    // insertions before them. One inside a `{file:}` token is part of that file
    // substitution, whose token is then shown with the env token restored (a secret must
    // not leak through the name of a file).
    let mut substitutions = Vec::with_capacity(env_subs.len() + file_subs.len());
    for env in &env_subs {
        let inside =
            file_subs.iter().any(|f| f.input.start < env.output.end && env.output.start < f.input.end);
        if inside {
            continue;
        }
        let shift: isize = file_subs
            .iter()
            .filter(|f| f.input.end <= env.output.start)
            .map(|f| f.output.len().cast_signed() - f.input.len().cast_signed())
            .sum();
        let at = |i: usize| i.saturating_add_signed(shift);
        substitutions.push(Substitution {
            token: env.token.clone(),
            output: at(env.output.start)..at(env.output.end),
            input: env.input.clone(),
        });
    }
    for file in file_subs {
        let token = unsubstitute(&with_env, file.input.clone(), &env_subs);
        // The token's first and last bytes (`{` and `}`) are never inside an env output.
        let input = written_offset(file.input.start, &env_subs)..written_offset(file.input.end, &env_subs);
        substitutions.push(Substitution { token, input, output: file.output });
    }
    substitutions.sort_by_key(|s| s.output.start);
    Ok((out, substitutions))
}

/// `text[range]` with every substitution output in it put back as its token: the text as
/// it was written.
pub fn unsubstitute(text: &str, range: std::ops::Range<usize>, substitutions: &[Substitution]) -> String {
    let mut written = String::new();
    let mut at = range.start;
    for sub in substitutions {
        let overlaps = sub.output.start < range.end && sub.output.end > range.start;
        let empty_inside = sub.output.is_empty() && range.contains(&sub.output.start);
        if !(overlaps || empty_inside) {
            continue;
        }
        let start = sub.output.start.max(at);
        written.push_str(text.get(at..start).unwrap_or(""));
        written.push_str(&sub.token);
        at = sub.output.end.clamp(at, range.end);
    }
    written.push_str(text.get(at..range.end).unwrap_or(""));
    written
}

/// Replaces every `{prefix…}` token (content up to the first `}`, non-empty). The
/// callback gets the token body and (start of its line, start of the token); `Err(None)`
/// leaves the token verbatim.
fn replace_tokens(
    text: &str,
    prefix: &str,
    mut replace: impl FnMut(&str, (usize, usize)) -> Result<String, Option<SubstitutionError>>,
    substitutions: &mut Vec<Substitution>,
) -> Result<String, SubstitutionError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = 0;
    while let Some(found) = text[rest..].find(prefix) {
        let start = rest + found;
        let body_start = start + prefix.len();
        let Some(len) = text[body_start..].find('}').filter(|&len| len > 0) else {
            out.push_str(&text[rest..body_start]);
            rest = body_start;
            continue;
        };
        let body = &text[body_start..body_start + len];
        let end = body_start + len + 1;
        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        out.push_str(&text[rest..start]);
        match replace(body, (line_start, start)) {
            Ok(value) => {
                let at = out.len();
                out.push_str(&value);
                substitutions.push(Substitution {
                    token: text[start..end].to_owned(),
                    output: at..out.len(),
                    input: start..end,
                });
            }
            Err(None) => out.push_str(&text[start..end]),
            Err(Some(err)) => return Err(err),
        }
        rest = end;
    }
    out.push_str(&text[rest..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str) -> Result<String, SubstitutionError> {
        let env = |name: &str| (name == "Q").then(|| "a\"b".to_owned());
        let read = |p: &Path| -> Result<Option<String>, String> {
            Ok((p == Path::new("/d/k.txt")).then(|| "\u{FEFF} line1\n\"x\"\t\n".to_owned()))
        };
        let cx = Context { env: &env, read: &read, dir: Path::new("/d"), os_home: Path::new("/h") };
        substitute(text, &cx).map(|(out, _)| out)
    }

    #[test]
    fn env_is_inserted_raw_everywhere() {
        // E-35: the quote is not escaped, even inside a comment.
        assert_eq!(run("{\"a\": \"{env:Q}\"} // {env:Q} {env:NONE}").unwrap(), "{\"a\": \"a\"b\"} // a\"b ");
    }

    #[test]
    fn file_is_trimmed_and_escaped_unless_commented() {
        assert_eq!(run("\"{file:k.txt}\"").unwrap(), "\"line1\\n\\\"x\\\"\"");
        // E-36 / E-37
        assert_eq!(run("  // \"k\": \"{file:missing}\"").unwrap(), "  // \"k\": \"{file:missing}\"");
        assert!(matches!(run("\"k\": \"v\", // {file:missing}"), Err(SubstitutionError::Missing { .. })));
    }

    #[test]
    fn error_offsets_and_value_ranges_refer_to_the_text_as_written() {
        // Found by the fuzz target: the env value is longer than its token.
        let text = "{\"q\": \"{env:Q}{env:Q}\", \"f\": \"{file:missing}\"}";
        let Err(SubstitutionError::Missing { offset, .. }) = run(text) else { panic!("expected an error") };
        assert_eq!(&text[offset..offset + 6], "{file:");
        let env = |_: &str| Some("é".to_owned());
        let read = |_: &Path| -> Result<Option<String>, String> { Ok(Some("x".to_owned())) };
        let cx = Context { env: &env, read: &read, dir: Path::new("/d"), os_home: Path::new("/h") };
        let (out, subs) = substitute("\"{file:a}{env:A}\"", &cx).unwrap();
        assert_eq!(out, "\"xé\"");
        let tokens: Vec<_> = subs.iter().map(|s| (s.token.as_str(), &out[s.output.clone()])).collect();
        assert_eq!(tokens, [("{file:a}", "x"), ("{env:A}", "é")]);
        assert_eq!(unsubstitute(&out, 0..out.len(), &subs), "\"{file:a}{env:A}\"");
        // Offsets in the output map back to the text as written; inside a value, to its token.
        let text = "\"{file:a}{env:A}\" x";
        let (out, subs) = substitute(text, &cx).unwrap();
        let at = |needle: &str| out.find(needle).expect("in output");
        assert_eq!(written_offset(at("é"), &subs), text.find("{env:A}").unwrap());
        assert_eq!(written_offset(at(" x"), &subs), text.find(" x").unwrap());
    }

    #[test]
    fn a_file_error_never_names_a_substituted_value() {
        let env = |_: &str| Some("s3cr3t".to_owned());
        let read = |_: &Path| -> Result<Option<String>, String> { Ok(None) };
        let cx = Context { env: &env, read: &read, dir: Path::new("/d"), os_home: Path::new("/h") };
        let Err(SubstitutionError::Missing { token, resolved, .. }) =
            substitute("\"{file:keys/{env:K}.txt}\"", &cx)
        else {
            panic!("expected an error")
        };
        assert_eq!(token, "{file:keys/{env:K}.txt}");
        assert_eq!(resolved, Path::new("/d/keys/{env:K}.txt"));
    }

    #[test]
    fn a_file_token_inside_an_env_value_is_named_by_the_env_token() {
        // Found by the fuzz target: the env value carries the whole `{file:}` token (V1 runs
        // before V2, so it is substituted), and a multibyte name used to panic the slicing.
        let env = |_: &str| Some("{file:missing}".to_owned());
        let read = |_: &Path| -> Result<Option<String>, String> { Ok(None) };
        let cx = Context { env: &env, read: &read, dir: Path::new("/d"), os_home: Path::new("/h") };
        let Err(SubstitutionError::Missing { token, resolved, offset }) =
            substitute("\"{env:\u{e9}t\u{e9}}\"", &cx)
        else {
            panic!("expected an error")
        };
        assert_eq!(token, "{env:\u{e9}t\u{e9}}");
        assert_eq!(resolved, Path::new("/d/{env:\u{e9}t\u{e9}}"));
        assert_eq!(offset, 1);
    }
}
