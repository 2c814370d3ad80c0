//! L1–L2: finding the user's opencode installation and loading opencode's own texts from it.
//!
//! The texts are string literals of the JavaScript bundled in the executable. They are found
//! without any anchor: every string literal of the file whose decoded length is one of the
//! table's lengths is hashed, and kept when the hash matches ([`extract`]). So nothing of
//! opencode's is needed to find them, and a text that changed is never used.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ctxgraph_db::installation::{AssetRecord, InstallationState, Texts, known_assets, known_offsets};
use ctxgraph_db::js_literals::{decode, extract, literal_body};

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
        Locate::from_vars(&crate::HostEnv::from_process().vars)
    }

    /// L1's search, reading the two variables from `vars` (a host's environment).
    pub fn from_vars(vars: &BTreeMap<String, String>) -> Locate {
        Locate::Search {
            env: vars.get("CTXGRAPH_OPENCODE").filter(|v| !v.is_empty()).cloned(),
            path: vars.get("PATH").cloned(),
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
