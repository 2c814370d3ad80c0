//! CP16: finding GitHub Copilot CLI's local installation and reading its wording from the
//! native runtime (I/O, so it lives in the engine; the recognition itself is
//! [`Scan`](ctxgraph_agents::copilot::prose::Scan)).
//!
//! Where to look, first found wins: `--copilot PATH`, `$CTXGRAPH_COPILOT`, then `copilot`
//! on `$PATH`. npm links `copilot` to the `@github/copilot` package's launcher, which runs
//! the platform package beside it (`@github/copilot-<platform>/copilot`): a single
//! executable whose embedded archive (`copilot.tgz`, gzip'd tar) holds the native runtime,
//! `prebuilds/<platform>/runtime.node`, where the strings are. A path may name the
//! launcher, either package directory, the executable, the runtime itself, or a folder the
//! executable unpacked the archive into (`~/.cache/copilot/pkg/<platform>/<version>`).

use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use ctxgraph_agents::copilot::Prose;
use ctxgraph_agents::copilot::prose::Scan;
use miniz_oxide::inflate::stream::{InflateState, inflate};
use miniz_oxide::{DataFormat, MZFlush, MZStatus};

/// The environment variable naming the installation.
pub const COPILOT_ENV: &str = "CTXGRAPH_COPILOT";

/// Files smaller than this are launchers, not the executable.
const MIN_EXECUTABLE_BYTES: u64 = 1024 * 1024;
/// The archive's name as the executable's asset table stores it: its length (8 bytes,
/// little-endian), the name, then the archive's length and the archive.
const ASSET: &[u8] = b"\x0b\x00\x00\x00\x00\x00\x00\x00copilot.tgz";
/// Chunks the runtime is searched in, overlapping so no string is cut.
const CHUNK: usize = 16 * 1024 * 1024;
const OVERLAP: usize = 64 * 1024;

/// Copilot's wording from the installation at `explicit`, or found through `vars`
/// (`CTXGRAPH_COPILOT`, `PATH`); placeholders when there is none, or it does not match.
pub fn copilot_prose(explicit: Option<&Path>, vars: &std::collections::BTreeMap<String, String>) -> Prose {
    let named = explicit
        .map(Path::to_path_buf)
        .or_else(|| vars.get(COPILOT_ENV).filter(|v| !v.is_empty()).map(PathBuf::from));
    let start = match named {
        Some(path) => path,
        None => match vars.get("PATH").and_then(|path| on_path(path, "copilot")) {
            Some(path) => path,
            None => {
                return Prose::unavailable(format!(
                    "no Copilot CLI installation (give --copilot PATH, set {COPILOT_ENV}, or put `copilot` on PATH)"
                ));
            }
        },
    };
    match locate(&start) {
        None => Prose::unavailable(format!(
            "{}: no Copilot CLI executable or runtime.node found there",
            start.display()
        )),
        Some(found) => match read_prose(&found) {
            Ok(prose) => prose,
            Err(err) => Prose::unavailable(err),
        },
    }
}

fn on_path(path: &str, name: &str) -> Option<PathBuf> {
    std::env::split_paths(path).map(|dir| dir.join(name)).find(|candidate| candidate.is_file())
}

/// What a path leads to.
#[derive(Debug)]
enum Found {
    /// `runtime.node` itself.
    Runtime { path: PathBuf, version: Option<String> },
    /// The single executable, with the archive inside.
    Executable { path: PathBuf, version: Option<String> },
}

fn locate(start: &Path) -> Option<Found> {
    let real = fs::canonicalize(start).ok()?;
    let big = |p: &Path| fs::metadata(p).is_ok_and(|m| m.is_file() && m.len() >= MIN_EXECUTABLE_BYTES);
    if big(&real) {
        let version = package_version(real.parent()?);
        return Some(if real.file_name().is_some_and(|n| n == "runtime.node") {
            // …/<version>/prebuilds/<platform>/runtime.node
            let version = real.ancestors().nth(3).and_then(package_version);
            Found::Runtime { path: real, version }
        } else {
            Found::Executable { path: real, version }
        });
    }
    // A directory (a package, an unpacked archive), or the launcher inside one.
    let dirs: Vec<&Path> =
        if real.is_dir() { vec![&real] } else { real.ancestors().skip(1).take(2).collect() };
    for dir in dirs {
        if let Some(runtime) = prebuilt_runtime(dir) {
            return Some(Found::Runtime { path: runtime, version: package_version(dir) });
        }
        for name in ["copilot", "copilot.exe"] {
            if big(&dir.join(name)) {
                return Some(Found::Executable { path: dir.join(name), version: package_version(dir) });
            }
        }
        // `…/@github/copilot` → `…/@github/copilot-<platform>/copilot`.
        if dir.file_name().is_some_and(|n| n == "copilot")
            && let Some(scope) = dir.parent()
            && let Ok(entries) = fs::read_dir(scope)
        {
            let mut platforms: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with("copilot-"))
                .flat_map(|e| ["copilot", "copilot.exe"].map(|n| e.path().join(n)))
                .filter(|p| big(p))
                .collect();
            platforms.sort();
            if let Some(exe) = platforms.into_iter().next() {
                let version = exe.parent().and_then(package_version);
                return Some(Found::Executable { path: exe, version });
            }
        }
    }
    None
}

/// `prebuilds/<platform>/runtime.node` in an unpacked archive.
fn prebuilt_runtime(dir: &Path) -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = fs::read_dir(dir.join("prebuilds"))
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path().join("runtime.node"))
        .filter(|p| p.is_file())
        .collect();
    found.sort();
    found.into_iter().next()
}

/// The `version` of the `package.json` in `dir`.
fn package_version(dir: &Path) -> Option<String> {
    let text = fs::read_to_string(dir.join("package.json")).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    json.get("version")?.as_str().map(str::to_owned)
}

fn read_prose(found: &Found) -> Result<Prose, String> {
    match found {
        Found::Runtime { path, version } => {
            let mut scan = Scan::new(version.as_deref())?;
            let file = fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
            feed_chunks(file, &mut scan).map_err(|e| format!("{}: {e}", path.display()))?;
            scan.finish(path)
        }
        Found::Executable { path, version } => {
            let mut scan = Scan::new(version.as_deref())?;
            let fail = |e: String| format!("{}: {e}", path.display());
            let runtime = runtime_in_executable(path, &mut scan).map_err(fail)?;
            scan.finish(&path.join(runtime))
        }
    }
}

/// Feeds `reader` to `scan` in overlapping chunks until the wording is found.
fn feed_chunks(mut reader: impl Read, scan: &mut Scan) -> std::io::Result<()> {
    let mut buffer = vec![0u8; CHUNK];
    let mut filled = 0;
    loop {
        let read = reader.read(&mut buffer[filled..])?;
        filled += read;
        if read == 0 || filled == buffer.len() {
            scan.feed(&buffer[..filled]);
            if scan.is_done() || read == 0 {
                return Ok(());
            }
            buffer.copy_within(filled - OVERLAP..filled, 0);
            filled = OVERLAP;
        }
    }
}

/// Finds the archive in the executable, inflates it as it streams, walks its tar entries to
/// `…/prebuilds/<platform>/runtime.node` and feeds that entry to `scan`. Returns the entry's
/// name.
fn runtime_in_executable(path: &Path, scan: &mut Scan) -> Result<String, String> {
    let mut file = fs::File::open(path).map_err(|e| e.to_string())?;
    let at = find_asset(&mut file).map_err(|e| e.to_string())?.ok_or("no copilot.tgz archive inside")?;
    file.seek(SeekFrom::Start(at)).map_err(|e| e.to_string())?;
    let mut length = [0u8; 8];
    file.read_exact(&mut length).map_err(|e| e.to_string())?;
    let archive = file.take(u64::from_le_bytes(length));
    let mut tar = Gunzip::new(archive).map_err(|e| e.to_string())?;
    loop {
        let mut header = [0u8; 512];
        if !tar.fill(&mut header).map_err(|e| e.to_string())? || header.iter().all(|&b| b == 0) {
            return Err("no prebuilds/*/runtime.node in the archive".to_owned());
        }
        let field = |range: std::ops::Range<usize>| {
            let bytes = &header[range];
            let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
            String::from_utf8_lossy(&bytes[..end]).into_owned()
        };
        let size = u64::from_str_radix(field(124..136).trim(), 8).map_err(|_| "a bad tar header")?;
        let prefix = field(345..500);
        let name = if prefix.is_empty() { field(0..100) } else { format!("{prefix}/{}", field(0..100)) };
        let padded = size.div_ceil(512) * 512;
        let is_file = matches!(header[156], b'0' | 0);
        if is_file && name.ends_with("/runtime.node") && name.contains("prebuilds/") {
            feed_chunks((&mut tar).take(size), scan).map_err(|e| e.to_string())?;
            return Ok(name);
        }
        tar.skip(padded).map_err(|e| e.to_string())?;
    }
}

/// The offset right after the archive's name in the executable.
fn find_asset(file: &mut fs::File) -> std::io::Result<Option<u64>> {
    let mut buffer = vec![0u8; CHUNK];
    let mut base = 0u64;
    let mut filled = 0;
    loop {
        let read = file.read(&mut buffer[filled..])?;
        filled += read;
        if read == 0 || filled == buffer.len() {
            if let Some(at) = memchr::memmem::find(&buffer[..filled], ASSET) {
                return Ok(Some(base + (at + ASSET.len()) as u64));
            }
            if read == 0 {
                return Ok(None);
            }
            let keep = ASSET.len();
            buffer.copy_within(filled - keep..filled, 0);
            base += (filled - keep) as u64;
            filled = keep;
        }
    }
}

/// A gzip member inflated as it is read (`miniz_oxide`'s raw inflate behind the header).
struct Gunzip<R> {
    input: R,
    state: Box<InflateState>,
    inbuf: Vec<u8>,
    in_start: usize,
    in_end: usize,
    done: bool,
}

impl<R: Read> Gunzip<R> {
    fn new(mut input: R) -> std::io::Result<Self> {
        let bad = || std::io::Error::new(std::io::ErrorKind::InvalidData, "not a gzip archive");
        let mut head = [0u8; 10];
        input.read_exact(&mut head)?;
        if head[..3] != [0x1f, 0x8b, 8] {
            return Err(bad());
        }
        let flags = head[3];
        if flags & 4 != 0 {
            let mut len = [0u8; 2];
            input.read_exact(&mut len)?;
            std::io::copy(&mut (&mut input).take(u64::from(u16::from_le_bytes(len))), &mut std::io::sink())?;
        }
        for bit in [8u8, 16] {
            if flags & bit != 0 {
                let mut byte = [0u8; 1];
                loop {
                    input.read_exact(&mut byte)?;
                    if byte[0] == 0 {
                        break;
                    }
                }
            }
        }
        if flags & 2 != 0 {
            input.read_exact(&mut [0u8; 2])?;
        }
        Ok(Gunzip {
            input,
            state: InflateState::new_boxed(DataFormat::Raw),
            inbuf: vec![0u8; 1 << 20],
            in_start: 0,
            in_end: 0,
            done: false,
        })
    }

    /// Fills `out` completely; `false` at the end of the stream before anything was read.
    fn fill(&mut self, out: &mut [u8]) -> std::io::Result<bool> {
        let mut filled = 0;
        while filled < out.len() {
            let n = self.read(&mut out[filled..])?;
            if n == 0 {
                return if filled == 0 {
                    Ok(false)
                } else {
                    Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "archive cut short"))
                };
            }
            filled += n;
        }
        Ok(true)
    }

    fn skip(&mut self, mut bytes: u64) -> std::io::Result<()> {
        let mut scratch = vec![0u8; 1 << 16];
        while bytes > 0 {
            let want = usize::try_from(bytes.min(scratch.len() as u64)).unwrap_or(scratch.len());
            if !self.fill(&mut scratch[..want])? {
                return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "archive cut short"));
            }
            bytes -= want as u64;
        }
        Ok(())
    }
}

impl<R: Read> Read for Gunzip<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        loop {
            if self.done || out.is_empty() {
                return Ok(0);
            }
            if self.in_start == self.in_end {
                self.in_start = 0;
                self.in_end = self.input.read(&mut self.inbuf)?;
            }
            let eof = self.in_end == 0;
            let flush = if eof { MZFlush::Finish } else { MZFlush::None };
            let result = inflate(&mut self.state, &self.inbuf[self.in_start..self.in_end], out, flush);
            self.in_start += result.bytes_consumed;
            match result.status {
                Ok(MZStatus::StreamEnd) => self.done = true,
                Ok(_) => {}
                Err(err) => {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!("inflate: {err:?}"),
                    ));
                }
            }
            if result.bytes_written > 0 {
                return Ok(result.bytes_written);
            }
            if eof && !self.done {
                return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "archive cut short"));
            }
        }
    }
}
