//! Each agent's own sentences (preambles, labels), read from the user's installation on the
//! real file system; each profile finds, recognises and verifies its own words
//! ([`Profile::wording`](ctxgraph_db::profile::Profile::wording)).

use std::collections::BTreeMap;
use std::path::Path;

use ctxgraph_db::agent::Agent;
use ctxgraph_db::profile::{InstallationSearch, Wording};

use crate::OsSystem;

/// The wording `agent`'s profile takes in [`Request::wording`](ctxgraph_db::profile::Request),
/// loaded from `explicit` or the installation `vars` name; `None` for an agent whose text has
/// no sentence of its own.
pub fn load(agent: Agent, explicit: Option<&Path>, vars: &BTreeMap<String, String>) -> Option<Wording> {
    crate::profiles::profile(agent).wording(&InstallationSearch { fs: &OsSystem, explicit, vars })
}
