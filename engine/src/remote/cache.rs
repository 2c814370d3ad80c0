//! The on-disk cache of remote instruction bodies: the last good body per URL,
//! content-addressed by blake3, with the validators to revalidate it.
//!
//! Layout under the cache dir: `blobs/<blake3 of body>` and `urls/<blake3 of URL>.json`.
//! Writes are atomic (temp file + rename, owner-only: entries record URLs, which may carry
//! tokens); a blob whose hash does not match its name is corrupt and ignored. The first
//! write of a run sweeps the temporary files a killed run left behind.

use std::path::{Path, PathBuf};
use std::sync::Once;

use serde::{Deserialize, Serialize};

use crate::atomic::{self, Access};

/// Last good copies of remote documents, one file per URL, keyed by the URL's hash.
#[derive(Debug)]
pub struct Cache {
    dir: PathBuf,
    swept: Once,
}

/// What the cache holds for one URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CachedBody {
    /// The document as fetched.
    pub body: Vec<u8>,
    /// The response's `ETag`, for revalidation.
    pub etag: Option<String>,
    /// The response's `Last-Modified`, for revalidation.
    pub last_modified: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    url: String,
    body: String,
    etag: Option<String>,
    last_modified: Option<String>,
}

impl Cache {
    /// A cache in `dir` (created on first write).
    pub fn new(dir: PathBuf) -> Self {
        Self { dir, swept: Once::new() }
    }

    /// Where the copies live.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn entry_path(&self, url: &str) -> PathBuf {
        self.dir.join("urls").join(format!("{}.json", blake3::hash(url.as_bytes()).to_hex()))
    }

    /// The cached body for `url`, if present and intact.
    pub fn get(&self, url: &str) -> Option<CachedBody> {
        let entry: Entry = serde_json::from_slice(&std::fs::read(self.entry_path(url)).ok()?).ok()?;
        if entry.url != url {
            return None;
        }
        let body = std::fs::read(self.dir.join("blobs").join(&entry.body)).ok()?;
        if blake3::hash(&body).to_hex().as_str() != entry.body {
            return None;
        }
        Some(CachedBody { body, etag: entry.etag, last_modified: entry.last_modified })
    }

    /// Stores `body` as the last good copy of `url`. Failures are returned, not fatal:
    /// a read-only cache only costs the next offline build.
    pub fn put(&self, url: &str, cached: &CachedBody) -> std::io::Result<()> {
        self.swept.call_once(|| {
            for sub in ["blobs", "urls"] {
                atomic::sweep(&self.dir.join(sub));
            }
        });
        let hash = blake3::hash(&cached.body).to_hex().to_string();
        write_atomic(&self.dir.join("blobs").join(&hash), &cached.body)?;
        let entry = Entry {
            url: url.to_owned(),
            body: hash,
            etag: cached.etag.clone(),
            last_modified: cached.last_modified.clone(),
        };
        let json = serde_json::to_vec_pretty(&entry).map_err(std::io::Error::other)?;
        write_atomic(&self.entry_path(url), &json)
    }
}

fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    atomic::write(path, bytes, Access::Private)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_ignores_corrupt_blobs() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path().to_path_buf());
        let body = CachedBody { body: b"rules\n".to_vec(), etag: Some("\"v1\"".into()), last_modified: None };
        cache.put("https://x/a.md", &body).unwrap();
        assert_eq!(cache.get("https://x/a.md"), Some(body.clone()));
        assert_eq!(cache.get("https://x/b.md"), None);
        let blob = dir.path().join("blobs").join(blake3::hash(b"rules\n").to_hex().as_str());
        std::fs::write(blob, b"tampered").unwrap();
        assert_eq!(cache.get("https://x/a.md"), None);
    }

    #[test]
    fn the_first_write_sweeps_temporary_files_a_killed_run_left() {
        let dir = tempfile::tempdir().unwrap();
        let leftover = dir.path().join("blobs").join(format!("{}abc", atomic::TEMP_PREFIX));
        std::fs::create_dir_all(leftover.parent().unwrap()).unwrap();
        std::fs::write(&leftover, vec![0u8; 1024]).unwrap();
        let old = std::time::SystemTime::now() - atomic::STALE_AFTER - std::time::Duration::from_secs(1);
        std::fs::File::options().write(true).open(&leftover).unwrap().set_modified(old).unwrap();
        let cache = Cache::new(dir.path().to_path_buf());
        let body = CachedBody { body: b"x".to_vec(), etag: None, last_modified: None };
        cache.put("https://x/a.md", &body).unwrap();
        assert!(!leftover.exists());
        let names: Vec<_> =
            std::fs::read_dir(dir.path().join("blobs")).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }
}
