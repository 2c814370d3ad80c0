//! CX11–CX12: what each rule-like file cost over a Codex session, read from its rollout file
//! (`~/.codex/sessions/YYYY/MM/DD/rollout-….jsonl`), which holds every input item exactly as
//! sent. A request is every item logged before the first output item of its answer (CX11);
//! its rule-like texts are each skills message's lines, each `AGENTS.md` message's files and
//! each `<skill>` message (CX12). The history is re-sent with every request, so a text
//! counts in every request after it appears; each item is scanned once, so a session of n
//! items costs O(n) scans.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::files::{File, file_bytes};
use ctxgraph_db::session_costs::{
    Interner, PathId, SessionFileError, SessionOccurrences, StepOccurrences, TextId, record_text,
};

use super::config::codex_home;
use super::{AGENTS_NAME, PROJECT_DOC_SEPARATOR};

/// CX11–CX12 over the rollout in `file`, for the project `ws` opens.
#[salsa::tracked(returns(ref))]
pub fn rollout_occurrences(
    db: &dyn Db,
    ws: Workspace,
    file: File,
) -> Result<SessionOccurrences, SessionFileError> {
    let text = record_text(db, file)?;
    let error = |line: Option<usize>, message: String| SessionFileError::new(db, file, line, message);
    let mut reader = Reader::new(db, ws);
    let mut records = 0;
    for (index, line) in text.split('\n').enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let record: serde_json::Value =
            serde_json::from_str(line).map_err(|e| error(Some(index + 1), format!("not JSON: {e}")))?;
        let serde_json::Value::Object(record) = record else {
            return Err(error(Some(index + 1), "a rollout line is a JSON object".to_owned()));
        };
        records += 1;
        match record.get("type").and_then(serde_json::Value::as_str) {
            Some("response_item") => {
                let payload = record
                    .get("payload")
                    .ok_or_else(|| error(Some(index + 1), "a response_item without a payload".to_owned()))?;
                reader.item(payload);
            }
            Some("compacted") => reader.compacted = true,
            _ => {}
        }
    }
    if records == 0 {
        return Err(error(None, "empty: no rollout records".to_owned()));
    }
    Ok(reader.finish())
}

/// The rollout read so far.
struct Reader<'a> {
    db: &'a dyn Db,
    ws: Workspace,
    table: Interner,
    /// Every rule-like text sent so far, as often as it was sent.
    history: BTreeMap<(PathId, TextId), u32>,
    /// Input items since the last output: the next output closes a request.
    inputs_pending: bool,
    steps: Vec<StepOccurrences>,
    /// `AGENTS.md` messages seen: every one after the first opens with Codex's sentence
    /// that it replaces the ones before.
    agents_messages: usize,
    /// Texts of an `AGENTS.md` message no file on disk now accounts for.
    unattributed: usize,
    /// The rollout records a compaction, which is not modelled.
    compacted: bool,
}

impl<'a> Reader<'a> {
    fn new(db: &'a dyn Db, ws: Workspace) -> Self {
        Reader {
            db,
            ws,
            table: Interner::default(),
            history: BTreeMap::new(),
            inputs_pending: false,
            steps: Vec::new(),
            agents_messages: 0,
            unattributed: 0,
            compacted: false,
        }
    }

    /// CX11: an input item joins the next request; the first output item of an answer
    /// closes it.
    fn item(&mut self, item: &serde_json::Value) {
        let kind = item.get("type").and_then(serde_json::Value::as_str).unwrap_or_default();
        let role = item.get("role").and_then(serde_json::Value::as_str).unwrap_or_default();
        let output =
            kind == "reasoning" || kind.ends_with("_call") || (kind == "message" && role == "assistant");
        if output {
            if std::mem::take(&mut self.inputs_pending) {
                self.steps.push(StepOccurrences {
                    request: format!("request {}", self.steps.len() + 1),
                    after_compaction: false,
                    present: self.history.iter().map(|(&(path, text), &n)| (path, text, n)).collect(),
                    why: Vec::new(),
                });
            }
            return;
        }
        self.inputs_pending = true;
        if kind != "message" {
            return;
        }
        let texts = item.get("content").and_then(serde_json::Value::as_array).into_iter().flatten();
        for text in texts.filter_map(|c| c.get("text").and_then(serde_json::Value::as_str)) {
            self.text(text);
        }
    }

    /// CX12: the rule-like texts of one content item.
    fn text(&mut self, text: &str) {
        if text.starts_with("<skills_instructions>") {
            self.skills_message(text);
        } else if text.starts_with("# AGENTS.md instructions") {
            self.agents_message(text);
        } else if let Some(rest) = text.strip_prefix("<skill>\n") {
            // The whole `<skill>` message is the file's cost: the model did not ask for it.
            let path = rest.lines().find_map(|l| l.strip_prefix("<path>")?.strip_suffix("</path>"));
            if let Some(path) = path {
                self.sent(PathBuf::from(path), text);
            }
        }
    }

    fn sent(&mut self, path: PathBuf, text: &str) {
        let key = (self.table.path(path), self.table.text(text));
        *self.history.entry(key).or_default() += 1;
    }

    /// CX10: each skill's line, by the roots table's alias.
    fn skills_message(&mut self, text: &str) {
        let mut roots: BTreeMap<&str, &str> = BTreeMap::new();
        for line in text.lines() {
            if let Some((alias, root)) =
                line.strip_prefix("- `").and_then(|l| l.strip_suffix('`')).and_then(|l| l.split_once("` = `"))
            {
                roots.insert(alias, root);
            } else if line.starts_with("- ")
                && let Some((alias, below)) = line
                    .rfind(" (file: ")
                    .and_then(|at| line[at + " (file: ".len()..].strip_suffix(')'))
                    .and_then(|file| file.split_once('/'))
                && let Some(root) = roots.get(alias)
            {
                self.sent(Path::new(root).join(below), line);
            }
        }
    }

    /// CX4, CX12: an `AGENTS.md` message's files. The message does not say where one file
    /// ends; the files Codex reads for its directory now, on disk, do.
    fn agents_message(&mut self, text: &str) {
        const OPEN: &str = "\n\n<INSTRUCTIONS>\n";
        let (Some(open), Some(close)) = (text.find(OPEN), text.rfind("\n</INSTRUCTIONS>")) else { return };
        let cwd = text[..open].strip_prefix("# AGENTS.md instructions for ").map(PathBuf::from);
        let mut body = text.get(open + OPEN.len()..close).unwrap_or_default();
        if self.agents_messages > 0 {
            // A later message opens with Codex's sentence that it replaces the ones before.
            body = body.split_once("\n\n").map_or("", |(_, rest)| rest);
        }
        self.agents_messages += 1;
        let (global, project) = match (body.split_once(PROJECT_DOC_SEPARATOR), &cwd) {
            (Some((global, project)), _) => (Some(global), Some(project)),
            (None, Some(_)) => (None, Some(body)),
            (None, None) => (Some(body), None),
        };
        if let Some(global) = global.filter(|g| !g.is_empty()) {
            let path = self.global_file();
            self.sent(path, global);
        }
        if let (Some(project), Some(cwd)) = (project, cwd) {
            self.project_files(&cwd, project);
        }
    }

    /// CX1: the global file Codex uses now (its `AGENTS.md` when none is sent).
    fn global_file(&self) -> PathBuf {
        super::global_docs(self.db, self.ws)
            .into_iter()
            .find(super::Doc::is_sent)
            .map_or_else(|| codex_home(self.db, self.ws.host(self.db)).join(AGENTS_NAME), |doc| doc.source)
    }

    /// CX2, CX3: the project part split among the files from the git root down to `cwd`,
    /// each found by its text on disk now; a file changed since is delimited by the next
    /// one's text, and what no file accounts for is counted and noted.
    fn project_files(&mut self, cwd: &Path, mut rest: &str) {
        let files = self.project_chain(cwd);
        let texts: Vec<String> = files
            .iter()
            .map(|path| {
                file_bytes(self.db, self.db.files().get(self.db, path))
                    .as_ref()
                    .map(|bytes| String::from_utf8_lossy(bytes).into_owned())
                    .unwrap_or_default()
            })
            .collect();
        let sent: Vec<usize> = (0..files.len()).filter(|&i| !texts[i].trim().is_empty()).collect();
        for (n, &i) in sent.iter().enumerate() {
            if rest.is_empty() {
                break;
            }
            let last = n + 1 == sent.len();
            let now = texts[i].as_str();
            let end = if rest.starts_with(now)
                && (rest.len() == now.len() || rest[now.len()..].starts_with("\n\n"))
            {
                now.len()
            } else if last {
                rest.len()
            } else {
                let next = texts[sent[n + 1]].as_str();
                rest.find(&format!("\n\n{next}")).unwrap_or(rest.len())
            };
            let (own, after) = rest.split_at(end);
            self.sent(files[i].clone(), own);
            rest = after.strip_prefix("\n\n").unwrap_or(after);
        }
        if !rest.is_empty() {
            self.unattributed += 1;
        }
    }

    /// The file Codex reads in each folder from the git root down to `cwd` (CX2, CX3).
    fn project_chain(&self, cwd: &Path) -> Vec<PathBuf> {
        let root = super::git_root(self.db, self.ws);
        super::project_dirs(cwd, root.as_deref())
            .iter()
            .filter_map(|dir| super::chosen_file(self.db, dir))
            .collect()
    }

    fn finish(self) -> SessionOccurrences {
        let mut notes = vec![
            "A step is one request to the model: every item the rollout logs before the first output item of its answer (CX11).".to_owned(),
            "A file's bytes in a step are its texts in that request as Codex sent them: a skill's line of the skills message, an AGENTS.md file's text in each AGENTS.md message, a <skill> message whole; the history is re-sent with every request and no prompt caching is assumed (CX12).".to_owned(),
            "Codex's own texts around them (its base instructions, the skills introduction, the permissions and environment items) belong to no file and are not counted.".to_owned(),
        ];
        if self.inputs_pending {
            notes.push(
                "The rollout ends with input items and no answer: that last request is not counted."
                    .to_owned(),
            );
        }
        if self.compacted {
            notes.push("The rollout records a compaction, which ctxgraph does not model for Codex: the requests after it are counted with the history before it, an upper bound.".to_owned());
        }
        if self.unattributed > 0 {
            notes.push(format!(
                "{} AGENTS.md message(s) hold text no AGENTS.md on disk now accounts for (a file removed since?): that text is not counted (CX12).",
                self.unattributed
            ));
        }
        SessionOccurrences {
            paths: self.table.paths,
            texts: self.table.texts,
            steps: self.steps,
            savings: Vec::new(),
            notes,
        }
    }
}
