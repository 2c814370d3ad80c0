//! The whole system message (`tests/message/<ID>`): ctxgraph's `system_message`, built with
//! the installed opencode 1.18.33's own texts, against the message the real binary sent
//! (`oracle.out`, written only by `tests/oracle/record-message.sh`). In the recording each of
//! opencode's texts is a marker naming its blake3; ours gets the same replacement, so every
//! other byte is compared, and the texts we load must hash to what the binary sent.
//!
//! A case may list blocks this branch does not build yet (`pending = ["skills"]`): the
//! recording must then be our message followed by exactly that many more blocks.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use ctxgraph_db::installation::InstallationState;
use ctxgraph_engine::installation::Locate;
use ctxgraph_engine::{Engine, OsSystem};
use ctxgraph_opencode::message::MessageOptions;
use ctxgraph_opencode::prompt::Section;
use ctxgraph_tests::{lay_out_config_case, normalize, recorded_cases};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    description: String,
    rules: Vec<String>,
    /// The model id under provider `fake`.
    model: String,
    #[serde(default)]
    agent: Option<String>,
    #[serde(default)]
    pending: Vec<String>,
}

/// `hash-opencode-texts.py`'s replacement, with the texts ctxgraph loaded.
fn hash_opencode_texts(message: &str, texts: &BTreeMap<String, Arc<str>>) -> String {
    let mut all: Vec<(String, String)> = texts.iter().map(|(k, v)| (k.clone(), v.to_string())).collect();
    if let Some(muse) = texts.get("model/muse") {
        for name in ["Muse Spark", "Muse Glimmer"] {
            all.push((format!("model/muse[{name}]"), muse.replace("{{MODEL_NAME}}", name)));
        }
    }
    all.sort_by_key(|(_, text)| std::cmp::Reverse(text.len()));
    let mut out = message.to_owned();
    for (name, text) in all {
        let marker = format!("<<opencode {name} blake3:{}>>", blake3::hash(text.as_bytes()).to_hex());
        out = out.replace(&text, &marker);
    }
    out
}

#[test]
fn messages_match_the_oracle() {
    let bin = ctxgraph_test_support::opencode::installed();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("message");
    let mut failures = Vec::new();
    let cases = recorded_cases::<Case>(&root);
    let count = cases.len();
    for (id, dir, case) in cases {
        assert!(!case.description.is_empty() && !case.rules.is_empty(), "{id}: describe the case");
        let recorded = std::fs::read_to_string(dir.join("oracle.out")).expect("oracle.out");
        let temp = tempfile::tempdir().expect("temp");
        let run = std::fs::canonicalize(temp.path()).expect("canonical");
        let env = lay_out_config_case(&dir, &run, false, &BTreeMap::new());
        let mut engine = Engine::new(Arc::new(OsSystem), env);
        let InstallationState::Found(found) = engine.load_installation(&Locate::Flag(bin.clone())).clone()
        else {
            panic!("{} did not load", bin.display());
        };
        let ws = engine.open(&run.join("proj")).expect("open");
        let options = MessageOptions {
            model: Some(format!("fake/{}", case.model).parse().expect("model")),
            agent: case.agent.clone().unwrap_or_else(|| "build".to_owned()),
            ..MessageOptions::default()
        };
        let prompt = engine.system_message(ws, options).expect("message");
        let ours = hash_opencode_texts(&normalize(&prompt.layout(Section::Message).text, &run), &found.texts);
        let matches = match recorded.strip_prefix(&ours) {
            Some("") => case.pending.is_empty(),
            // The rest must be whole blocks: one LF before each.
            Some(rest) => !case.pending.is_empty() && rest.starts_with('\n'),
            None => false,
        };
        if !matches {
            failures
                .push(format!("{id} (pending {:?}):\nctxgraph\n{ours}\nopencode\n{recorded}", case.pending));
        }
    }
    assert!(count >= 13, "expected the message cases, found {count}");
    assert!(failures.is_empty(), "{} of {count} cases differ:\n{}", failures.len(), failures.join("\n\n"));
}
