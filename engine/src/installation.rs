//! L1–L2: finding the user's opencode installation and loading opencode's own texts from it.
//!
//! The texts are string literals of the JavaScript bundled in the executable. They are found
//! without any anchor: every string literal of the file whose decoded length is one of the
//! table's lengths is hashed, and kept when the hash matches ([`extract`]). So nothing of
//! opencode's is needed to find them, and a text that changed is never used.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ctxgraph_db::installation::{AssetRecord, InstallationState, Texts, known_assets, known_offsets};

/// Where the installation comes from, in L1's order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Locate {
    /// `--opencode PATH`.
    Flag(PathBuf),
    /// Look at `$CTXGRAPH_OPENCODE`, then `opencode` on `$PATH`.
    Search {
        /// `$CTXGRAPH_OPENCODE`.
        env: Option<String>,
        /// `$PATH`.
        path: Option<String>,
    },
}

impl Locate {
    /// L1's search, reading the two variables from this process.
    pub fn from_process() -> Locate {
        Locate::Search {
            env: std::env::var("CTXGRAPH_OPENCODE").ok().filter(|v| !v.is_empty()),
            path: std::env::var("PATH").ok(),
        }
    }
}

/// L1–L2: locate, read the version, extract and verify. Never fails: what is missing is
/// said in [`InstallationState::Missing`] or, per text, by its absence from [`Texts`].
pub fn load(locate: &Locate) -> InstallationState {
    let missing = |reason: String| InstallationState::Missing { reason };
    let given = match locate {
        Locate::Flag(path) => path.clone(),
        Locate::Search { env: Some(path), .. } => PathBuf::from(path),
        Locate::Search { env: None, path } => match search_path(path.as_deref()) {
            Some(found) => found,
            None => {
                return missing(
                    "no `opencode` on PATH (use --opencode PATH or CTXGRAPH_OPENCODE)".to_owned(),
                );
            }
        },
    };
    let binary = match resolve_binary(&given) {
        Ok(binary) => binary,
        Err(reason) => return missing(format!("{}: {reason}", given.display())),
    };
    let version = match version(&binary) {
        Ok(version) => version,
        Err(reason) => return missing(format!("{}: {reason}", binary.display())),
    };
    let Some(table) = known_assets(&version) else {
        return InstallationState::Found(Arc::new(Texts { binary, version, texts: BTreeMap::new() }));
    };
    let read = || -> std::io::Result<BTreeMap<String, Arc<str>>> {
        let mut file = std::fs::File::open(&binary)?;
        let size = file.metadata()?.len();
        let mut texts = known_offsets(&version, size)
            .map(|offsets| read_at_offsets(&mut file, table, offsets))
            .transpose()?
            .unwrap_or_default();
        if texts.len() < table.len() {
            let rest: BTreeMap<String, AssetRecord> = table
                .iter()
                .filter(|(name, _)| !texts.contains_key(*name))
                .map(|(n, r)| (n.clone(), r.clone()))
                .collect();
            let bytes = std::fs::read(&binary)?;
            texts.extend(extract(&bytes, &rest));
        }
        Ok(texts)
    };
    match read() {
        Ok(texts) => InstallationState::Found(Arc::new(Texts { binary, version, texts })),
        Err(err) => missing(format!("{}: cannot read: {err}", binary.display())),
    }
}

/// The assets whose recorded offsets hold a literal that verifies; the others are left
/// to [`extract`].
fn read_at_offsets(
    file: &mut std::fs::File,
    table: &BTreeMap<String, AssetRecord>,
    offsets: &BTreeMap<String, [u64; 2]>,
) -> std::io::Result<BTreeMap<String, Arc<str>>> {
    use std::io::{Read, Seek, SeekFrom};
    let mut texts = BTreeMap::new();
    for (name, record) in table {
        let Some(&[start, end]) = offsets.get(name) else { continue };
        let Some(len) = end.checked_sub(start).and_then(|n| usize::try_from(n).ok()) else { continue };
        let mut literal = vec![0; len];
        file.seek(SeekFrom::Start(start))?;
        if file.read_exact(&mut literal).is_err() {
            continue;
        }
        if let Some(text) = verified(&literal, record) {
            texts.insert(name.clone(), text);
        }
    }
    Ok(texts)
}

/// The literal's text if it is exactly one literal, quotes included, and matches `record`.
fn verified(literal: &[u8], record: &AssetRecord) -> Option<Arc<str>> {
    let body = literal_body(literal, 0)?;
    if body.len() + 2 != literal.len() {
        return None;
    }
    let text = decode(body, literal[0] == b'`')?;
    (text.len() == record.bytes && blake3::hash(text.as_bytes()).to_hex().as_str() == record.blake3)
        .then(|| Arc::from(text))
}

fn search_path(path: Option<&str>) -> Option<PathBuf> {
    std::env::split_paths(path?).map(|dir| dir.join("opencode")).find(|candidate| candidate.is_file())
}

/// The executable behind `given`: itself (symlinks followed) when it is a native binary;
/// for npm's `opencode-ai` launcher, the platform package's binary beside it, as the
/// launcher picks it (`opencode-<os>-<arch>`, then its `-baseline`/`-musl` variants).
fn resolve_binary(given: &Path) -> Result<PathBuf, String> {
    let real = std::fs::canonicalize(given).map_err(|e| format!("not found: {e}"))?;
    if is_native(&real)? {
        return Ok(real);
    }
    // bin/opencode[.exe] of the opencode-ai package, in node_modules.
    let package = real.parent().and_then(Path::parent).ok_or("not an opencode executable")?;
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "windows",
        other => other,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => other,
    };
    let base = format!("opencode-{os}-{arch}");
    let exe = if os == "windows" { "opencode.exe" } else { "opencode" };
    let homes = [package.join("node_modules"), package.parent().map(Path::to_path_buf).unwrap_or_default()];
    for home in &homes {
        for variant in ["", "-baseline", "-musl", "-baseline-musl"] {
            let candidate = home.join(format!("{base}{variant}")).join("bin").join(exe);
            if candidate.is_file() && is_native(&candidate).unwrap_or(false) {
                return Ok(candidate);
            }
        }
    }
    Err(format!("a launcher script, and no {base} package beside it holds the opencode binary"))
}

/// ELF, Mach-O or PE: what a Bun-compiled opencode is (the launcher is a script).
fn is_native(path: &Path) -> Result<bool, String> {
    use std::io::Read;
    let mut head = [0u8; 4];
    let mut file = std::fs::File::open(path).map_err(|e| format!("cannot open: {e}"))?;
    let n = file.read(&mut head).map_err(|e| format!("cannot read: {e}"))?;
    let head = &head[..n];
    Ok(head.starts_with(b"\x7fELF")
        || head.starts_with(b"MZ")
        || [[0xcf, 0xfa, 0xed, 0xfe], [0xca, 0xfe, 0xba, 0xbe], [0xfe, 0xed, 0xfa, 0xcf]]
            .iter()
            .any(|m| head == m))
}

/// The release: the `version` of the npm package holding the binary, else what
/// `opencode --version` prints (bounded: 10 s).
fn version(binary: &Path) -> Result<String, String> {
    if let Some(manifest) = binary.parent().and_then(Path::parent).map(|p| p.join("package.json"))
        && let Ok(text) = std::fs::read_to_string(&manifest)
        && let Ok(json) = serde_json::from_str::<serde_json::Value>(&text)
        && json["name"].as_str().is_some_and(|n| n.starts_with("opencode"))
        && let Some(version) = json["version"].as_str()
    {
        return Ok(version.to_owned());
    }
    let mut child = Command::new(binary)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run --version: {e}"))?;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err("--version did not answer within 10 s".to_owned());
            }
        }
    }
    let output = child.wait_with_output().map_err(|e| format!("--version: {e}"))?;
    let text = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    if text.is_empty() || !text.chars().next().is_some_and(|c| c.is_ascii_digit()) {
        return Err(format!("--version printed {text:?}, not a version"));
    }
    Ok(text)
}

/// L2: every asset of `table` found in `bytes` as a JavaScript string literal (`"…"`,
/// `'…'`, or a template literal without substitutions) whose decoded text has the
/// recorded length and blake3. Literals are tried at every quote character, so no
/// tokenizer is needed: a start inside code or another literal decodes to text that
/// matches nothing.
pub fn extract(bytes: &[u8], table: &BTreeMap<String, AssetRecord>) -> BTreeMap<String, Arc<str>> {
    let mut wanted: HashMap<(usize, [u8; 32]), Vec<&str>> = HashMap::new();
    for (name, record) in table {
        if let Ok(hash) = blake3::Hash::from_hex(&record.blake3) {
            wanted.entry((record.bytes, *hash.as_bytes())).or_default().push(name);
        }
    }
    let lengths: Vec<usize> = wanted.keys().map(|(len, _)| *len).collect();
    let (Some(&shortest), Some(&longest)) = (lengths.iter().min(), lengths.iter().max()) else {
        return BTreeMap::new();
    };
    let mut found = BTreeMap::new();
    // Bun puts the bundle after its runtime, each module opening with `// @bun`: what comes
    // before the first one is machine code (when there is no such marker, all is scanned).
    let from = memchr::memmem::find(bytes, b"// @bun").unwrap_or(0);
    for start in memchr::memchr3_iter(b'"', b'\'', b'`', &bytes[from..]).map(|i| i + from) {
        let Some(raw) = literal_body(bytes, start) else { continue };
        // A decoded text is never longer than its source, and an escape is at most
        // ten source bytes per decoded byte.
        if raw.len() < shortest || raw.len() > longest.saturating_mul(10) {
            continue;
        }
        let Some(text) = decode(raw, bytes[start] == b'`') else { continue };
        if !lengths.contains(&text.len()) {
            continue;
        }
        let key = (text.len(), *blake3::hash(text.as_bytes()).as_bytes());
        if let Some(names) = wanted.remove(&key) {
            let text: Arc<str> = Arc::from(text);
            for name in names {
                found.insert(name.to_owned(), Arc::clone(&text));
            }
            if wanted.is_empty() {
                break;
            }
        }
    }
    found
}

/// The source bytes between the quote at `start` and its closing quote; `None` when it
/// does not close on the same line (`"`, `'`) or holds a `${` substitution (template).
fn literal_body(bytes: &[u8], start: usize) -> Option<&[u8]> {
    let quote = bytes[start];
    let mut at = start + 1;
    loop {
        let offset = memchr::memchr3(quote, b'\\', if quote == b'`' { b'$' } else { b'\n' }, &bytes[at..])?;
        let i = at + offset;
        match bytes[i] {
            b'\\' => at = i + 2,
            b'$' if bytes.get(i + 1) == Some(&b'{') => return None,
            b'$' => at = i + 1,
            b'\n' => return None,
            _ => return Some(&bytes[start + 1..i]),
        }
        if at >= bytes.len() {
            return None;
        }
    }
}

/// A literal's value: JavaScript's escapes decoded (`\n`, `\t`, `\xHH`, `\uHHHH` with
/// surrogate pairs, `\u{…}`, line continuations, any other escaped character as itself);
/// in a template literal a raw CR LF reads as LF. `None` for invalid UTF-8 or a lone
/// surrogate, which no recorded text contains.
fn decode(raw: &[u8], template: bool) -> Option<String> {
    let raw = std::str::from_utf8(raw).ok()?;
    let mut units: Vec<u16> = Vec::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    let push = |units: &mut Vec<u16>, c: char| {
        let mut buf = [0u16; 2];
        units.extend_from_slice(c.encode_utf16(&mut buf));
    };
    while let Some(c) = chars.next() {
        if c == '\r' && template {
            if chars.peek() == Some(&'\n') {
                chars.next();
            }
            units.push(u16::from(b'\n'));
            continue;
        }
        if c != '\\' {
            push(&mut units, c);
            continue;
        }
        let escaped = chars.next()?;
        let hex = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>, n: usize| -> Option<u32> {
            let digits: String = (0..n).map(|_| chars.next()).collect::<Option<String>>()?;
            u32::from_str_radix(&digits, 16).ok()
        };
        match escaped {
            'n' => units.push(0x0a),
            't' => units.push(0x09),
            'r' => units.push(0x0d),
            'b' => units.push(0x08),
            'f' => units.push(0x0c),
            'v' => units.push(0x0b),
            '0' if !chars.peek().is_some_and(char::is_ascii_digit) => units.push(0),
            'x' => units.push(u16::try_from(hex(&mut chars, 2)?).ok()?),
            'u' if chars.peek() == Some(&'{') => {
                chars.next();
                let digits: String = chars.by_ref().take_while(|&c| c != '}').collect();
                push(&mut units, char::from_u32(u32::from_str_radix(&digits, 16).ok()?)?);
            }
            'u' => units.push(u16::try_from(hex(&mut chars, 4)?).ok()?),
            '\n' | '\u{2028}' | '\u{2029}' => {}
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
            }
            other => push(&mut units, other),
        }
    }
    String::from_utf16(&units).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(texts: &[(&str, &str)]) -> BTreeMap<String, AssetRecord> {
        texts
            .iter()
            .map(|(name, text)| {
                (
                    (*name).to_owned(),
                    AssetRecord {
                        bytes: text.len(),
                        blake3: blake3::hash(text.as_bytes()).to_hex().to_string(),
                    },
                )
            })
            .collect()
    }

    #[test]
    fn finds_literals_of_every_quote_by_length_and_hash() {
        let first = "Line one\nit's `quoted` \u{2192} \u{1F600} done";
        let second = "A \"double\" string";
        let bundle = concat!(
            "var a=`Line one\n", // a raw line break in a template
            "it's \\`quoted\\` \\u2192 \\uD83D\\uDE00 done`,b=\"A \\\"double\\\" string\";",
            "var c=`with ${x} substitution`;'Line one\\nit\\'s'"
        );
        let found =
            extract(bundle.as_bytes(), &table(&[("one", first), ("two", second), ("three", "absent")]));
        assert_eq!(found.get("one").map(|t| &**t), Some(first));
        assert_eq!(found.get("two").map(|t| &**t), Some(second));
        assert!(!found.contains_key("three"));
    }

    #[test]
    fn a_changed_text_is_not_used() {
        let found = extract(b"x=\"Hello, world\"", &table(&[("greeting", "Hello, World")]));
        assert!(found.is_empty());
    }

    #[test]
    fn a_missing_installation_says_why() {
        let state = load(&Locate::Search { env: None, path: Some(String::new()) });
        assert!(matches!(state, InstallationState::Missing { reason } if reason.contains("PATH")));
        let state = load(&Locate::Flag(PathBuf::from("/nonexistent/opencode")));
        assert!(
            matches!(state, InstallationState::Missing { reason } if reason.contains("/nonexistent/opencode"))
        );
    }
}
