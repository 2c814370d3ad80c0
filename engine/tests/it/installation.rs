//! L1–L3: opencode's own texts loaded from a real installation (the npm-installed 1.18.33,
//! see `ctxgraph_test_support::opencode`) and from fake ones.

use std::path::Path;
use std::sync::Arc;

use ctxgraph_db::Db;
use ctxgraph_db::installation::{InstallationState, asset, known_assets};
use ctxgraph_engine::installation::{Locate, load};
use ctxgraph_engine::{Engine, HostEnv, OsSystem};
use ctxgraph_test_support::opencode;

#[test]
fn every_text_of_the_installed_release_is_found_and_verified() {
    let bin = opencode::installed();
    let InstallationState::Found(found) = load(&Locate::Flag(bin.clone())) else {
        panic!("{} was not loaded", bin.display());
    };
    assert_eq!(found.version, opencode::VERSION);
    let table = known_assets(opencode::VERSION).expect("table");
    let missing: Vec<&String> = table.keys().filter(|name| !found.texts.contains_key(*name)).collect();
    assert!(missing.is_empty(), "not found in {}: {missing:?}", found.binary.display());
    for (name, record) in table {
        let text = &found.texts[name];
        assert_eq!(text.len(), record.bytes, "{name}");
        assert_eq!(blake3::hash(text.as_bytes()).to_hex().as_str(), record.blake3, "{name}");
    }
}

#[test]
fn the_search_finds_opencode_on_path_through_npm_s_link() {
    let bin = opencode::installed();
    let dir = bin.parent().expect("bin dir");
    let state = load(&Locate::Search { env: None, path: Some(dir.display().to_string()) });
    assert!(matches!(&state, InstallationState::Found(f) if f.version == opencode::VERSION), "{state:?}");
    // CTXGRAPH_OPENCODE wins over PATH.
    let state = load(&Locate::Search { env: Some(bin.display().to_string()), path: Some(String::new()) });
    assert!(matches!(&state, InstallationState::Found(_)), "{state:?}");
}

fn engine() -> Engine {
    let env = HostEnv {
        vars: std::collections::BTreeMap::default(),
        home: "/nonexistent-home".into(),
        platform: "linux".to_owned(),
        date: "Sun Nov 29 2026".to_owned(),
    };
    Engine::new(Arc::new(OsSystem), env)
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, bytes).expect("write");
}

#[test]
fn a_launcher_without_its_platform_package_is_missing_with_the_reason() {
    let temp = tempfile::tempdir().expect("temp");
    let launcher = temp.path().join("node_modules/opencode-ai/bin/opencode");
    write(&launcher, b"#!/usr/bin/env node\n");
    let state = load(&Locate::Flag(launcher.clone()));
    let InstallationState::Missing { reason } = state else { panic!("found {state:?}") };
    assert!(reason.contains("launcher") && reason.contains(&launcher.display().to_string()), "{reason}");
}

#[test]
fn a_launcher_leads_to_the_platform_binary_and_its_version() {
    let temp = tempfile::tempdir().expect("temp");
    let modules = temp.path().join("node_modules");
    let launcher = modules.join("opencode-ai/bin/opencode");
    write(&launcher, b"#!/usr/bin/env node\n");
    let platform = match std::env::consts::ARCH {
        "aarch64" => "arm64",
        _ => "x64",
    };
    let package = modules.join(format!("opencode-{}-{platform}", std::env::consts::OS));
    write(&package.join("bin/opencode"), b"\x7fELF var a=\"not opencode's text\";");
    write(&package.join("package.json"), br#"{"name": "opencode-linux-x64", "version": "1.18.33"}"#);
    let mut engine = engine();
    let state = engine.load_installation(&Locate::Flag(launcher)).clone();
    let InstallationState::Found(found) = state else { panic!("{state:?}") };
    assert_eq!(found.version, "1.18.33");
    assert!(found.texts.is_empty(), "a fake binary holds none of the texts");
    let db = engine.db();
    let err = asset(db, db.installation(), "model/default").expect_err("unavailable");
    assert!(err.reason.contains("not found") && err.reason.contains("1.18.33"), "{}", err.reason);
    assert!(err.placeholder().contains("model/default"));
}

#[test]
fn an_unknown_release_is_named() {
    let temp = tempfile::tempdir().expect("temp");
    let bin = temp.path().join("pkg/bin/opencode");
    write(&bin, b"\x7fELF");
    write(&temp.path().join("pkg/package.json"), br#"{"name": "opencode-ai", "version": "0.0.1"}"#);
    let mut engine = engine();
    engine.load_installation(&Locate::Flag(bin));
    let db = engine.db();
    let err = asset(db, db.installation(), "model/default").expect_err("unavailable");
    assert!(err.reason.contains("0.0.1") && err.reason.contains("no table"), "{}", err.reason);
}

#[test]
fn without_offsets_the_scan_finds_every_text() {
    let bin = opencode::installed();
    let bytes = std::fs::read(&bin).expect("read the executable");
    let table = known_assets(opencode::VERSION).expect("table");
    let texts = ctxgraph_db::js_literals::extract(&bytes, table);
    let missing: Vec<&String> = table.keys().filter(|name| !texts.contains_key(*name)).collect();
    assert!(missing.is_empty(), "the scan missed {missing:?}");
}
