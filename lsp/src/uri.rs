//! `file://` URIs to paths and back, and links to this repository's docs.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use lsp_types::Uri;

/// Bytes a path keeps as they are in a URI; every other byte is percent-encoded.
fn unreserved(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"-._~/!$&'()*+,;=:@".contains(&byte)
}

/// `file://` + the path, percent-encoded; `None` for a relative path.
pub fn path_to_uri(path: &Path) -> Option<Uri> {
    if !path.is_absolute() {
        return None;
    }
    let mut uri = String::from("file://");
    for &byte in path.as_os_str().as_encoded_bytes() {
        if unreserved(byte) {
            uri.push(char::from(byte));
        } else {
            let _ = write!(uri, "%{byte:02X}");
        }
    }
    Uri::from_str(&uri).ok()
}

/// The path of a `file://` URI (percent-decoded); `None` for any other scheme.
pub fn uri_to_path(uri: &Uri) -> Option<PathBuf> {
    let text = uri.as_str();
    let rest = text.strip_prefix("file://")?;
    // `file://host/path`: only the local host (empty or `localhost`) is a path here.
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return None;
    }
    let bytes = rest.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'%'
            && let Some(hex) = rest.get(at + 1..at + 3)
            && let Ok(byte) = u8::from_str_radix(hex, 16)
        {
            decoded.push(byte);
            at += 3;
        } else {
            decoded.push(bytes[at]);
            at += 1;
        }
    }
    Some(PathBuf::from(String::from_utf8_lossy(&decoded).into_owned()))
}

/// A page of this repository's docs (`docs/lint.md#cg001`), for a diagnostic's link.
pub fn repository_doc(page: &str) -> Option<Uri> {
    Uri::from_str(&format!("{}/blob/main/{page}", env!("CARGO_PKG_REPOSITORY"))).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_round_trip_through_uris() {
        for path in ["/repo/AGENTS.md", "/a b/ü%.md", "/x/[y]#z.json"] {
            let uri = path_to_uri(Path::new(path));
            assert_eq!(uri.as_ref().and_then(uri_to_path).as_deref(), Some(Path::new(path)), "{uri:?}");
        }
        assert_eq!(
            path_to_uri(Path::new("/a b")).map(|u| u.as_str().to_owned()),
            Some("file:///a%20b".to_owned())
        );
        assert_eq!(path_to_uri(Path::new("rel")), None);
        assert_eq!(Uri::from_str("https://x/y").ok().as_ref().and_then(uri_to_path), None);
    }
}
