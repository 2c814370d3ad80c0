//! CC40–CC44: what each rule-like file cost over a Claude Code session, from its transcript
//! (`~/.claude/projects/<project>/<id>.jsonl`). Nothing is simulated where the transcript
//! records what was sent: each `api-request` record names the messages of one main-loop
//! request (`base`'s first `keep` messages, then the `tail` hashes), and each
//! `api-request-blob` holds a user message exactly as sent. The rule-like texts in each
//! message are found once (`scan`); a request's texts are its base's plus its tail's, so a
//! session of n requests costs O(n) messages scanned, never O(n²).

mod records;
mod savings;
mod scan;
mod why;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use ctxgraph_db::db::Db;
use ctxgraph_db::files::File;
use ctxgraph_db::session_costs::{
    Interner, PathId, SessionFileError, SessionOccurrences, StepOccurrences, TextId, record_text,
};

use records::Record;

/// How Claude Code opens a skill's body (CC45): the folder follows.
const BASE_DIRECTORY: &str = "Base directory for this skill: ";

/// CC40: the rule-like texts of every main-loop request of the transcript in `file`.
#[salsa::tracked(returns(ref))]
pub fn transcript_occurrences(db: &dyn Db, file: File) -> Result<SessionOccurrences, SessionFileError> {
    let text = record_text(db, file)?;
    let error = |line: Option<usize>, message: String| SessionFileError::new(db, file, line, message);
    let mut session = Transcript::default();
    for (index, line) in text.split('\n').enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let record = records::parse(line).map_err(|m| error(Some(index + 1), m))?;
        session.add(record).map_err(|m| error(Some(index + 1), m))?;
    }
    Ok(session.finish())
}

/// One `api-request`: how many messages it sent, and its texts.
struct Request {
    id: String,
    len: usize,
    base: Option<usize>,
    keep: usize,
    tail: Vec<Option<usize>>,
    present: Vec<(PathId, TextId, u32)>,
}

/// The transcript read so far.
#[derive(Default)]
struct Transcript {
    interner: Interner,
    /// The rule-file block's files, from the `instructions` records: path → text.
    entries: HashMap<String, String>,
    /// Paths the transcript's records call rule files.
    rules: HashSet<String>,
    /// Skill and command bodies, as sent: text → the skill's `SKILL.md` or `(skill NAME)`.
    bodies: HashMap<String, String>,
    /// Skill tool calls: call id → skill name.
    skill_calls: HashMap<String, String>,
    /// Output styles in force, by name.
    styles: Vec<String>,
    /// Each blob's texts, by index; `blob_ids` maps a message hash to it.
    blobs: Vec<Vec<(PathId, TextId)>>,
    blob_ids: HashMap<String, usize>,
    requests: Vec<Request>,
    request_ids: HashMap<String, usize>,
    /// A `compact_boundary` since the last request.
    compacted: bool,
    after_compaction: Vec<bool>,
    /// Files the model read or wrote, with the index of the request that first carried the
    /// result.
    touches: Vec<(PathBuf, usize)>,
    /// Files sent in the first message's block (no `paths:`, CC2).
    always: HashSet<PathId>,
    cwd: Option<PathBuf>,
    /// Hashes with no blob: the assistant's messages (they carry no rule text).
    without_blob: usize,
}

impl Transcript {
    fn add(&mut self, record: Record) -> Result<(), String> {
        match record {
            Record::Instructions { files } => {
                for (path, text) in files {
                    self.rules.insert(path.clone());
                    self.entries.insert(path, text);
                }
            }
            Record::NestedMemory { path } => {
                self.rules.insert(path);
            }
            Record::CompactBoundary => self.compacted = true,
            Record::Blob { hash, strings } => self.blob(hash, &strings),
            Record::Request { id, base, keep, tail } => self.request(id, base.as_deref(), keep, &tail)?,
            Record::ToolUse { cwd, files, skills } => {
                if self.cwd.is_none() {
                    self.cwd = cwd;
                }
                self.skill_calls.extend(skills);
                let at = self.requests.len();
                self.touches.extend(files.into_iter().map(|f| (f, at)));
            }
            Record::MetaText { tool_use, texts } => {
                // CC45: a skill's body names its folder; a command's only its name.
                let Some(skill) = self.skill_calls.get(&tool_use) else { return Ok(()) };
                for text in texts {
                    let name = text
                        .strip_prefix(BASE_DIRECTORY)
                        .and_then(|rest| rest.split('\n').next())
                        .map_or_else(|| format!("(skill {skill})"), |dir| format!("{dir}/SKILL.md"));
                    self.bodies.insert(text, name);
                }
            }
            Record::OutputStyle { name } => {
                if !self.styles.contains(&name) {
                    self.styles.push(name);
                }
            }
            Record::Other { cwd } => {
                if self.cwd.is_none() {
                    self.cwd = cwd;
                }
            }
        }
        Ok(())
    }

    fn is_rule(&self, path: &str) -> bool {
        let name = Path::new(path).file_name().and_then(|n| n.to_str()).unwrap_or_default();
        self.rules.contains(path)
            || matches!(name, "CLAUDE.md" | "CLAUDE.local.md" | "MEMORY.md")
            || path.contains("/.claude/rules/")
    }

    fn blob(&mut self, hash: String, strings: &[String]) {
        if self.blob_ids.contains_key(&hash) {
            return;
        }
        let mut found = Vec::new();
        let is_rule = |p: &str| self.is_rule(p);
        let known = scan::Known {
            entries: &self.entries,
            bodies: &self.bodies,
            styles: &self.styles,
            is_rule: &is_rule,
        };
        for text in strings {
            for hit in scan::scan(text, &known) {
                found.push((hit.path, &text[hit.range], hit.entry));
            }
        }
        let found: Vec<(PathId, TextId)> = found
            .into_iter()
            .map(|(path, text, entry)| {
                let path = self.interner.path(PathBuf::from(path));
                if entry {
                    self.always.insert(path);
                }
                (path, self.interner.text(text))
            })
            .collect();
        self.blob_ids.insert(hash, self.blobs.len());
        self.blobs.push(found);
    }

    /// CC40: the request's texts are the first `keep` messages' of `base`, then the tail's.
    fn request(
        &mut self,
        id: String,
        base: Option<&str>,
        keep: usize,
        tail: &[String],
    ) -> Result<(), String> {
        let base = match base {
            Some(base) => Some(
                *self
                    .request_ids
                    .get(base)
                    .ok_or_else(|| format!("api-request {id}: base {base} is no earlier request"))?,
            ),
            None if keep > 0 => return Err(format!("api-request {id}: keeps {keep} message(s) of no base")),
            None => None,
        };
        let tail: Vec<Option<usize>> = tail.iter().map(|h| self.blob_ids.get(h).copied()).collect();
        self.without_blob += tail.iter().filter(|t| t.is_none()).count();
        let mut present = BTreeMap::new();
        if let Some(base) = base {
            self.prefix(base, keep, &mut present).map_err(|m| format!("api-request {id}: {m}"))?;
        }
        self.add_messages(&tail, &mut present);
        let present: Vec<(PathId, TextId, u32)> = present.into_iter().map(|((p, t), n)| (p, t, n)).collect();
        self.request_ids.insert(id.clone(), self.requests.len());
        self.requests.push(Request { id, len: keep + tail.len(), base, keep, tail, present });
        self.after_compaction.push(std::mem::take(&mut self.compacted));
        Ok(())
    }

    fn add_messages(&self, messages: &[Option<usize>], into: &mut BTreeMap<(PathId, TextId), u32>) {
        for blob in messages.iter().flatten() {
            for &key in &self.blobs[*blob] {
                *into.entry(key).or_default() += 1;
            }
        }
    }

    /// The texts of the first `count` messages of request `at`.
    fn prefix(
        &self,
        mut at: usize,
        mut count: usize,
        into: &mut BTreeMap<(PathId, TextId), u32>,
    ) -> Result<(), String> {
        loop {
            let request = &self.requests[at];
            if count > request.len {
                return Err(format!("keeps {count} message(s) of a request that sent {}", request.len));
            }
            if count == request.len {
                for &(path, text, n) in &request.present {
                    *into.entry((path, text)).or_default() += n;
                }
                return Ok(());
            }
            if count > request.keep {
                self.add_messages(&request.tail[..count - request.keep], into);
                count = request.keep;
            }
            match request.base {
                Some(base) => at = base,
                None => return Ok(()),
            }
        }
    }

    fn finish(self) -> SessionOccurrences {
        let mut touched: Vec<Vec<&PathBuf>> = vec![Vec::new(); self.requests.len()];
        for (file, at) in &self.touches {
            if let Some(step) = touched.get_mut(*at) {
                step.push(file);
            }
        }
        let steps: Vec<StepOccurrences> = self
            .requests
            .iter()
            .enumerate()
            .map(|(index, request)| {
                let before = index.checked_sub(1).map_or(&[][..], |i| self.requests[i].present.as_slice());
                let after_compaction = self.after_compaction[index];
                StepOccurrences {
                    request: request.id.clone(),
                    after_compaction,
                    present: request.present.clone(),
                    why: why::why(
                        before,
                        &request.present,
                        &self.interner.texts,
                        after_compaction,
                        &touched[index],
                    ),
                }
            })
            .collect();
        let mut notes = vec![
            "A step is one main-loop request (an `api-request` record); /compact's summarisation requests are not recorded and not counted (CC40).".to_owned(),
            "A file's bytes in a step are every text of it in that request, wrapper included, as often as it is there: the history is re-sent with each request and no prompt caching is assumed (CC41).".to_owned(),
        ];
        if self.without_blob > 0 {
            notes.push(format!(
                "{} message(s) without a blob were taken as the assistant's, which carry no rule text (CC40).",
                self.without_blob
            ));
        }
        let savings = match &self.cwd {
            Some(cwd) => savings::savings(&savings::Facts {
                cwd,
                paths: &self.interner.paths,
                always: &self.always,
                touches: &self.touches,
                after_compaction: &self.after_compaction,
            }),
            None => Vec::new(),
        };
        if !savings.is_empty() {
            notes.push(savings::NOTE.to_owned());
        }
        SessionOccurrences { paths: self.interner.paths, texts: self.interner.texts, steps, savings, notes }
    }
}
