//! Substitution (V1–V2) + JSONC parsing (J1) + schema (S2) + merging (C1/C2) on arbitrary
//! text: no panic, no hang. The input is split at the first NUL into two layers; `{env:X}`
//! resolves to the text after the second NUL and `{file:…}` to a fixed file.

#![no_main]

use std::path::{Path, PathBuf};

use ctxgraph_opencode::config::tree::{merge_concat, merge_deep};
use ctxgraph_opencode::config::{ConfigSource, SourceKind, load_text};
use ctxgraph_opencode::substitute::Context;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.splitn(3, '\0');
    let first = parts.next().unwrap_or("");
    let second = parts.next().unwrap_or("{}");
    let env_value = parts.next().unwrap_or("a\"b").to_owned();
    let env = move |_: &str| Some(env_value.clone());
    let read = |p: &Path| -> Result<Option<String>, String> {
        match p.file_name().and_then(|n| n.to_str()) {
            Some("missing") => Ok(None),
            Some("denied") => Err("permission denied".to_owned()),
            _ => Ok(Some(" \u{feff}x\"\\\n".to_owned())),
        }
    };
    let dir = PathBuf::from("/d");
    let cx = Context { env: &env, read: &read, dir: &dir, os_home: Path::new("/h") };
    let source = |name: &str| ConfigSource::virtual_source(SourceKind::Project, name, dir.clone());
    let layers: Vec<_> = [first, second]
        .iter()
        .filter_map(|text| load_text(text, &source("f"), &cx, true).ok()?.tree)
        .collect();
    if let [a, b] = layers.as_slice() {
        let mut concat = a.clone();
        merge_concat(&mut concat, b.clone());
        let mut deep = a.clone();
        merge_deep(&mut deep, b.clone());
        let _ = (concat.render(false), deep.leaves().len());
    }
});
