//! The on-disk cache of remote instruction bodies: the last good body per URL,
//! content-addressed by blake3, with the validators to revalidate it.
//!
//! Layout under the cache dir: `blobs/<blake3 of body>` and `urls/<blake3 of URL>.json`.
//! Writes are atomic (temp file + rename, owner-only: entries record URLs, which may carry
//! tokens); a blob whose hash does not match its name is corrupt and ignored. A URL keeps
//! one blob: the body its entry names; a new body's write removes the one it replaced
//! (unless another URL's entry names it too). The first write of a run sweeps the
//! temporary files a killed run left behind, and the blobs no entry names.

use std::collections::HashSet;
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

    fn blob_path(&self, hash: &str) -> PathBuf {
        self.dir.join("blobs").join(hash)
    }

    /// The entry stored for `url`, if readable and really for it.
    fn entry(&self, url: &str) -> Option<Entry> {
        let entry: Entry = serde_json::from_slice(&std::fs::read(self.entry_path(url)).ok()?).ok()?;
        (entry.url == url).then_some(entry)
    }

    /// The blobs the URL entries name.
    fn named_blobs(&self) -> HashSet<String> {
        let Ok(entries) = std::fs::read_dir(self.dir.join("urls")) else { return HashSet::new() };
        entries
            .flatten()
            .filter_map(|e| serde_json::from_slice::<Entry>(&std::fs::read(e.path()).ok()?).ok())
            .map(|e| e.body)
            .collect()
    }

    /// Removes the blobs no entry names, old enough that no live writer is between
    /// writing one and writing its entry (left by versions that kept every body).
    fn sweep_unnamed_blobs(&self) {
        let named = self.named_blobs();
        let Ok(blobs) = std::fs::read_dir(self.dir.join("blobs")) else { return };
        let now = std::time::SystemTime::now();
        for blob in blobs.flatten() {
            let Ok(meta) = blob.metadata() else { continue };
            let old = meta
                .modified()
                .ok()
                .and_then(|m| now.duration_since(m).ok())
                .is_some_and(|age| age >= atomic::STALE_AFTER);
            let name = blob.file_name().to_string_lossy().into_owned();
            if meta.is_file() && old && !name.starts_with(atomic::TEMP_PREFIX) && !named.contains(&name) {
                let _ = std::fs::remove_file(blob.path());
            }
        }
    }

    /// The cached body for `url`, if present and intact.
    pub fn get(&self, url: &str) -> Option<CachedBody> {
        let entry = self.entry(url)?;
        let body = std::fs::read(self.blob_path(&entry.body)).ok()?;
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
            self.sweep_unnamed_blobs();
        });
        let hash = blake3::hash(&cached.body).to_hex().to_string();
        let replaced = self.entry(url).map(|e| e.body).filter(|old| *old != hash);
        write_atomic(&self.blob_path(&hash), &cached.body)?;
        let entry = Entry {
            url: url.to_owned(),
            body: hash,
            etag: cached.etag.clone(),
            last_modified: cached.last_modified.clone(),
        };
        let json = serde_json::to_vec_pretty(&entry).map_err(std::io::Error::other)?;
        write_atomic(&self.entry_path(url), &json)?;
        // Content-addressed: another URL with the same body names the same blob.
        if let Some(old) = replaced
            && !self.named_blobs().contains(&old)
        {
            let _ = std::fs::remove_file(self.blob_path(&old));
        }
        Ok(())
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

    fn blobs(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir.join("blobs"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_url_keeps_only_the_blob_its_entry_names() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path().to_path_buf());
        let body =
            |text: &str| CachedBody { body: text.as_bytes().to_vec(), etag: None, last_modified: None };
        for version in 0..5 {
            cache.put("https://x/a.md", &body(&format!("rules v{version}\n"))).unwrap();
        }
        assert_eq!(blobs(dir.path()), [blake3::hash(b"rules v4\n").to_hex().to_string()]);
        assert_eq!(cache.get("https://x/a.md"), Some(body("rules v4\n")));
        // A blob two URLs share stays while one of them still names it.
        cache.put("https://x/b.md", &body("rules v4\n")).unwrap();
        cache.put("https://x/a.md", &body("rules v5\n")).unwrap();
        assert_eq!(blobs(dir.path()).len(), 2);
        assert_eq!(cache.get("https://x/b.md"), Some(body("rules v4\n")));
    }

    #[test]
    fn the_first_write_sweeps_blobs_no_entry_names() {
        let dir = tempfile::tempdir().unwrap();
        let orphan = dir.path().join("blobs").join(blake3::hash(b"old").to_hex().as_str());
        std::fs::create_dir_all(orphan.parent().unwrap()).unwrap();
        std::fs::write(&orphan, b"old").unwrap();
        let old = std::time::SystemTime::now() - atomic::STALE_AFTER - std::time::Duration::from_secs(1);
        std::fs::File::options().write(true).open(&orphan).unwrap().set_modified(old).unwrap();
        let cache = Cache::new(dir.path().to_path_buf());
        cache
            .put("https://x/a.md", &CachedBody { body: b"x".to_vec(), etag: None, last_modified: None })
            .unwrap();
        assert!(!orphan.exists());
        assert_eq!(blobs(dir.path()), [blake3::hash(b"x").to_hex().to_string()]);
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
