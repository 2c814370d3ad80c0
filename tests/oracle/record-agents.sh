#!/usr/bin/env bash
# record-agents.sh - record the expected outputs of tests/agents/<agent>/<ID>/ from the REAL
# agent CLIs (the oracle in ../shared/oracle/agents: Codex 0.171.0, Claude Code 2.1.332 and
# Gemini CLI 0.61.0 run
# offline against a fake model on 127.0.0.1; Copilot CLI 1.0.102, Qwen Code 0.24.4, Kilo Code
# 7.7.7, Cline 3.0.65 and Continue CLI 1.5.47 through the same oracle's more/; Aider 0.86.2
# through its capture_aider.sh).
# Expected outputs never come from anywhere else.
# After each capture, listing.py writes the case's listing.txt: the order the disk listed each
# folder of the agent's run in (its `readdir` order), which the runners lay the case out in.
#
# usage: tests/oracle/record-agents.sh [codex/ID...]    (no argument: every case)
#   AGENTS_ORACLE   the oracle directory (default: ../shared/oracle/agents beside the repo,
#                   else /work/shared/oracle/agents)
#
# Per case: capture_codex.sh -C <run.cwd> [-c <run.config>]... <case> <scratch>, then keep
# only what the test compares: the text of the `# AGENTS.md instructions…` user message
# (empty when Codex sent none), with the scratch run directory written as `<run>`, in
# <case>/oracle.out. A case with `section = "request"` keeps instead the `<skills_instructions>`
# item (its introduction, Codex's own, as `<prose:blake3=HASH>`) and the AGENTS.md item, in
# send order, a blank line apart. The fixture's rule files are ours; Codex's own prompts are not kept.
#
# Claude Code with `section = "request"`: oracle.out is the whole first request as
# cc_request.py keeps it (its docstring says how), each run.config `KEY=VALUE` passed to
# Claude Code as `--KEY VALUE` (`KEY=true` as `--KEY` alone) (CC20).
# Claude Code: capture_cc.sh -C <run.cwd> [-R <run.reads>] on a copy of the case whose
# files have `<run>` replaced by the run directory (absolute paths, ~/.claude.json keys); oracle.out is the rule-file
# <system-reminder> of the first user message, oracle.read (with run.reads) what each Read's
# result carried after the file (its <system-reminder>s: rule files, then the skills of a folder
# with its own .claude/skills, their sentences as `<prose:blake3=HASH>`), under a
# `--- read FILE ---` line. Claude Code's own words (the preamble,
# the labels) are kept only as `<prose:blake3=HASH>`.
#
# Gemini: capture_gemini.sh -C <run.cwd> [-R <run.read>] <case> <scratch>, then keep three
# texts (each empty when Gemini sent none), with the run directory written as `<run>`:
# oracle.system, the system instruction from its last `<loaded_context>` to its end (Gemini's
# prose before it is not kept); oracle.user, the first user message's `<loaded_context>` up to
# `</session_context>`; oracle.read (with run.read only), what the read_file result carries
# after the file's own text.
#
# Cline 3.0.65: more/capture_cline.sh -C <run.cwd> [-R <run.read>] <case> <scratch>, then keep
# oracle.system, the system prompt from its `# Rules` line to its end (empty when Cline sent no
# rules; every later request must carry the same), and with run.read, oracle.read: the
# read_files result (JSON) with the file's own text written as `<file>`.
#
# Continue CLI 1.5.47: more/capture_continue.sh -C <run.cwd> [-R <run.read>], then keep
# oracle.system, the system message from its `<context name="userRules">` line to its end
# (empty when there is none; every later request must carry the same), and with run.read,
# oracle.read: the Read result with the file's own text written as `<file>`.
#
# Aider 0.86.2: more/capture_aider.sh -C <run.cwd> <case> <scratch>, each `read=FILE` of
# run.config passed as `--read FILE` (AI_EXTRA), run.env set for it; then keep oracle.user, the first user message
# when it is the read-only one (Aider's messages are then system, read-only files, its reply,
# the no-editable-files pair, the prompt, the reminder: seven; five without read-only files,
# and oracle.user is empty), its opening sentences (up to the first blank line) kept as
# `<prose:blake3=HASH>`, the run directory written as `<run>`. Aider keeps the read-only files
# in a Python set, whose order follows per-process string hashes: a case that sends two files
# or more is captured four times more, and every other order seen is kept as oracle.user-2, …
# A case with `refused = true` expects Aider to exit with 2 before any request (oracle.refused).
#
# Auggie 0.36.0: more/capture_auggie.sh -C <run.cwd> <case> <scratch>, then keep
# oracle.request: the rule-bearing fields of its chat-stream request to Augment's server
# (user_guidelines, workspace_guidelines, rules, skills, in the request's order) as
# JSON.stringify writes them, with the run directory written as `<run>` and the built-in
# rule's text (Auggie's own) as `<prose:blake3=HASH>`.
#
# Qwen Code: more/capture_qwen.sh -C <run.cwd> [-R <run.read>] on a copy of the case with
# `<run>` replaced (absolute imports; the script copies `above/` beside the git root), then
# keep two texts with the run directory written as `<run>`: oracle.system, the system message
# from its first `--- Context from:` (or `--- Rule from:`) line to its last `--- End of … from:
# … ---` line (Qwen's own prompt around it is not kept); oracle.read (with run.read only), what
# the read_file result carries after the file's text (from the blank line before its
# `<system-reminder>`; empty when nothing is appended). An `output-language.md` that Qwen
# wrote itself during the run (the fixture has none there, or another text) is Qwen's
# wording: its trimmed text is kept as `<prose:blake3=HASH>` wherever the block carries it.
# Every later request carrying context (the memory-extraction subagent's) must carry the same
# text, or the recording fails.
# Copilot CLI 1.0.102: more/capture_copilot.sh -C <run.cwd> [-R <run.read>] <case> <scratch>
# (the fixture's `above/` goes into the folder holding the git root), then keep, with the run
# directory written as `<run>`: oracle.system, the custom-instructions section of the system
# message, exactly the text between the tools section (`</tools>` and a blank line) and the
# next section (`<system_notifications>`, after one newline): every <custom_instruction>
# block, the instruction files' texts and the applyTo table; oracle.read (with run.read
# only), the user message Copilot adds after the view's tool result (empty when it adds
# none). Copilot's own sentences are kept as `<prose:blake3=HASH>`: the table's introduction
# and header (everything before its first row) and the two parts of the sentence that opens
# each attached file. A case with `refused = true` expects Copilot to send no request at all
# (its static context is over the model's budget): oracle.refused holds the warning's type.
# Kilo Code 7.7.7: more/capture_kilo.sh -C <run.cwd> [-R <run.read>] <case> <scratch>, then keep,
# with the run directory written as `<run>`: oracle.system, the system message's
# `Instructions from:` parts, exactly: from the first line starting `Instructions from: ` to
# the newline before the skills part that follows them (empty when Kilo sent no rule file;
# the recording fails when that part cannot be found); oracle.read (with run.read only), what
# the read tool's result carries after the file (from the blank line before its
# `<system-reminder>`; empty when nothing is appended). Every request must carry the same
# system message. Kilo's own prompt around them is not kept; the parts carry no sentence of
# Kilo's own (the label is opencode's format marker).
# pi 0.73.1: more/capture_pi.sh -C <run.cwd> [-R <run.read>] on a copy of the case with `<run>`
# replaced (run.env too: $PI_CODING_AGENT_DIR), refused when a context file sits above the
# run directory (pi's walk goes to `/`); then keep oracle.system, pi's whole system message
# (every request must carry the same), with pi's base prompt (when no SYSTEM.md replaced it;
# its package folder written `<pi>` before hashing) and the skills introduction as
# `<prose:blake3=HASH>`, the date as `<date>`, the run directory as `<run>`; with run.read,
# oracle.read: the read result with the file's own text written as `<file>`.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CASES=$ROOT/tests/agents
ORACLE=${AGENTS_ORACLE:-}
if [ -z "$ORACLE" ]; then
  for d in "$ROOT/../shared/oracle/agents" /work/shared/oracle/agents; do
    [ -x "$d/capture_codex.sh" ] && { ORACLE=$(cd "$d" && pwd); break; }
  done
fi
[ -n "$ORACLE" ] || { echo "record-agents.sh: no agent oracle (set AGENTS_ORACLE)" >&2; exit 1; }
export LC_ALL=C.UTF-8 PYTHONIOENCODING=utf-8
SCRATCH=$(mktemp -d /tmp/ctxgraph-agents.XXXXXX)
trap 'rm -rf "$SCRATCH"' EXIT

if [ $# -gt 0 ]; then IDS=("$@"); else
  mapfile -t IDS < <(cd "$CASES" && for d in */*/; do [ -f "$d/case.toml" ] && echo "${d%/}"; done | LC_ALL=C sort)
fi

record_codex() {  # case dir, scratch out
  local dir=$1 out=$2 args=()
  mapfile -t args < <(python3 - "$dir/case.toml" <<'PY'
import sys, tomllib
run = tomllib.load(open(sys.argv[1], "rb")).get("run", {})
print("-C"); print(run.get("cwd", "."))
for kv in run.get("config", []):
    print("-c"); print(kv)
PY
)
  "$ORACLE/capture_codex.sh" "${args[@]}" "$dir" "$out" >"$out.log" 2>&1 || true
  grep -q 'codex rc=0' "$out/stderr" || { cat "$out.log" "$out/stderr" >&2; echo "codex failed on $dir" >&2; return 1; }
  python3 - "$out" "$dir/oracle.out" <<'PY'
import glob, json, sys
out, dest = sys.argv[1], sys.argv[2]
reqs = sorted(glob.glob(out + "/cap/req-*.json"), key=lambda f: int(f.rsplit("-", 1)[1].split(".")[0]))
if not reqs:
    sys.exit("no request captured in " + out)
first = json.load(open(reqs[0], encoding="utf-8"))
texts = [c.get("text", "") for it in first.get("input", []) if it.get("type") == "message" and it.get("role") == "user"
         for c in it.get("content", []) if c.get("text", "").startswith("# AGENTS.md instructions")]
if len(texts) > 1:
    sys.exit("more than one AGENTS.md message in " + reqs[0])
text = texts[0] if texts else ""
with open(dest, "w", encoding="utf-8", newline="") as f:
    f.write(text.replace(out + "/run", "<run>"))
PY
  if [ "$(python3 -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb")).get("run", {}).get("section", ""))' "$dir/case.toml")" = request ]; then
    python3 - "$out" "$dir/oracle.out" <<'PY'
import glob, json, sys
from blake3 import blake3
out, dest = sys.argv[1], sys.argv[2]
reqs = sorted(glob.glob(out + "/cap/req-*.json"), key=lambda f: int(f.rsplit("-", 1)[1].split(".")[0]))
first = json.load(open(reqs[0], encoding="utf-8"))
items = []
for it in first.get("input", []):
    if it.get("type") != "message":
        continue
    for c in it.get("content", []):
        t = c.get("text", "")
        if t.startswith("<skills_instructions>"):
            # The introduction under `## Skills` is Codex's own sentence: kept as its hash.
            lines = t.split("\n")
            lines[2] = "<prose:blake3=%s>" % blake3(lines[2].encode()).hexdigest()
            items.append("\n".join(lines))
        elif t.startswith("# AGENTS.md instructions"):
            items.append(t)
# Separate input items, in send order; ctxgraph prints them a blank line apart.
with open(dest, "w", encoding="utf-8", newline="") as f:
    f.write("\n\n".join(items).replace(out + "/run", "<run>"))
PY
  fi
}

# A copy of the case at $out.fix whose files have `<run>` replaced by the run directory the
# capture will use (absolute paths in the fixture, ~/.claude.json keys).
with_run() {  # case dir, scratch out
  local dir=$1 out=$2
  rm -rf "$out.fix"; cp -a "$dir" "$out.fix"
  # (grep finds nothing in a case without `<run>`: not a failure.)
  { grep -rlZ -- '<run>' "$out.fix/proj" "$out.fix/home" "$out.fix/above" 2>/dev/null || true; } | xargs -0 -r sed -i "s#<run>#$out/run#g"
  # `<repo>`: this repository (a case's MCP server is its tests/oracle/mcp_server.py).
  { grep -rlZ -- '<repo>' "$out.fix/proj" "$out.fix/home" 2>/dev/null || true; } | xargs -0 -r sed -i "s#<repo>#$ROOT#g"
  # Claude Code's auto memory of <run>/proj (CC15): its folder is named after that path.
  if [ -d "$out.fix/automemory" ]; then
    local slug; slug=$(python3 -c 'import re, sys; print(re.sub("[^A-Za-z0-9]", "-", sys.argv[1]))' "$out/run/proj")
    mkdir -p "$out.fix/home/.claude/projects/$slug"
    cp -a "$out.fix/automemory" "$out.fix/home/.claude/projects/$slug/memory"
  fi
}

record_cc() {  # case dir, scratch out
  local dir=$1 out=$2 args=() capture=$ORACLE
  mapfile -t args < <(python3 - "$dir/case.toml" <<'PY'
import sys, tomllib
run = tomllib.load(open(sys.argv[1], "rb")).get("run", {})
print("-C"); print(run.get("cwd", "."))
reads = run.get("reads", [])
if len(reads) == 1:
    print("-R"); print(reads[0])
PY
)
  # Several reads: one Read per request, each with its own tool_use id (capture_cc.sh -T;
  # the fake server gives each answer its own message id too, as a real model's are).
  python3 - "$dir/case.toml" >"$out.tools" <<'PY'
import json, sys, tomllib
reads = tomllib.load(open(sys.argv[1], "rb")).get("run", {}).get("reads", [])
if len(reads) > 1:
    print(json.dumps([{"id": "toolu_fake_%d" % (i + 1), "name": "Read", "input": {"file_path": "<proj>/" + r}}
                      for i, r in enumerate(reads)]))
PY
  [ -s "$out.tools" ] && args+=(-T "$out.tools")
  # Settings that are Claude Code flags (CC20) go to it as extra arguments.
  python3 - "$dir/case.toml" >"$out.args" <<'PY'
import sys, tomllib
for kv in tomllib.load(open(sys.argv[1], "rb")).get("run", {}).get("config", []):
    key, value = kv.split("=", 1)
    print("--" + key)
    if value != "true":  # `KEY=true` is a flag without a value
        print(value)
PY
  [ -s "$out.args" ] && args+=(-X "$out.args")
  with_run "$dir" "$out"
  "$capture/capture_cc.sh" "${args[@]}" "$out.fix" "$out" >"$out.log" 2>&1 || true
  grep -q 'claude rc=0' "$out/stderr" || { cat "$out.log" "$out/stderr" >&2; echo "claude failed on $dir" >&2; return 1; }
  if [ "$(python3 -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb")).get("run", {}).get("section", ""))' "$dir/case.toml")" = request ]; then
    python3 "$HERE/cc_request.py" "$out" "$dir" >"$dir/oracle.out"
    return
  fi
  python3 - "$out" "$dir" <<'PY'
import glob, json, re, sys, tomllib
import blake3
out, case = sys.argv[1], sys.argv[2]
run = out + "/run"
# CC15: the auto memory's folder is named after the project's path.
slug = re.sub("[^A-Za-z0-9]", "-", run + "/proj")
reads = tomllib.load(open(case + "/case.toml", "rb")).get("run", {}).get("reads", [])
token = lambda text: "<prose:blake3=%s>" % blake3.blake3(text.encode()).hexdigest()
def texts(content):
    return [content] if isinstance(content, str) else [b.get("text", "") for b in content if b.get("type") == "text"]
reqs = sorted(glob.glob(out + "/cap/req-*.json"), key=lambda f: int(f.rsplit("-", 1)[1].split(".")[0]))
reqs = [r for r in (json.load(open(f, encoding="utf-8")) for f in reqs) if r.get("messages")]
if not reqs:
    sys.exit("no request captured in " + out)
first = reqs[0]["messages"][0]
blocks = [t for t in texts(first["content"]) if re.search(r"^Contents of .*:$", t, re.M)]
if len(blocks) > 1:
    sys.exit("more than one rule-file block in " + out)
block = blocks[0] if blocks else ""
if block:
    head, sep, rest = block.partition("\n\nContents of ")
    preamble = head.removeprefix("<system-reminder>\n")
    block = "<system-reminder>\n" + token(preamble) + sep + rest
    block = re.sub(r"^(Contents of .*?)( \([^()]*\)):$", lambda m: m.group(1) + token(m.group(2)) + ":", block, flags=re.M)
with open(case + "/oracle.out", "w", encoding="utf-8", newline="") as f:
    f.write(block.replace(slug, "<slug>").replace(run, "<run>"))
if reads:
    # The last request holds every Read and its result, in order.
    results = {b["tool_use_id"]: b["content"] for m in reqs[-1]["messages"] if isinstance(m["content"], list)
               for b in m["content"] if b.get("type") == "tool_result"}
    parts = []
    for i, read in enumerate(reads):
        result = results.get("toolu_fake_%d" % (i + 1))
        if result is None:
            sys.exit("the Read of %s was not answered in %s" % (read, out))
        result = result if isinstance(result, str) else "".join(texts(result))
        # The rule files' reminders, then the skill reminders of a folder with its own
        # .claude/skills (CC21); the token budget's reminder after them is not kept.
        found = [m for m in re.finditer(r"<system-reminder>\n(?:(?!</system-reminder>).)*</system-reminder>", result, re.S)
                 if not m.group().startswith("<system-reminder>\n<total_tokens>")]
        attached = result[found[0].start():found[-1].end()] if found else ""
        attached = re.sub(r"^(<system-reminder>\n)(.*?)(\S*\.claude/skills)(,.*:)$",
                          lambda m: m.group(1) + token(m.group(2)) + m.group(3) + token(m.group(4)), attached, flags=re.M)
        attached = re.sub(r"^(- .*?)( \(from )(\S*\.claude/skills)( .*? )(\S+/)\)$",
                          lambda m: m.group(1) + token(m.group(2)) + m.group(3) + token(m.group(4)) + m.group(5) + ")",
                          attached, flags=re.M)
        attached = re.sub(r"^(<system-reminder>\n)([^\n]*)(\n\n- )", lambda m: m.group(1) + token(m.group(2)) + m.group(3),
                          attached, flags=re.M)
        parts.append("--- read %s ---\n%s\n" % (read, attached))
    with open(case + "/oracle.read", "w", encoding="utf-8", newline="") as f:
        f.write("".join(parts).replace(slug, "<slug>").replace(run, "<run>"))
PY
}

record_gemini() {  # case dir, scratch out
  local dir=$1 out=$2 args=()
  mapfile -t args < <(python3 - "$dir/case.toml" <<'PY'
import sys, tomllib
run = tomllib.load(open(sys.argv[1], "rb")).get("run", {})
print("-C"); print(run.get("cwd", "."))
if run.get("read"):
    print("-R"); print(run["read"])
PY
)
  "$ORACLE/capture_gemini.sh" "${args[@]}" "$dir" "$out" >"$out.log" 2>&1 || true
  grep -q 'gemini rc=0' "$out/stderr" || { cat "$out.log" "$out/stderr" >&2; echo "gemini failed on $dir" >&2; return 1; }
  python3 - "$out" "$dir" <<'PY'
import glob, json, sys, tomllib
out, dest = sys.argv[1], sys.argv[2]
run = out + "/run"
reqs = sorted(glob.glob(out + "/cap/req-*.json"), key=lambda f: int(f.rsplit("-", 1)[1].split(".")[0]))
reqs = [json.load(open(f, encoding="utf-8")) for f in reqs]
reqs = [r for r in reqs if r.get("contents")]
if not reqs:
    sys.exit("no generateContent request captured in " + out)
first = reqs[0]
si = "".join(p.get("text", "") for p in (first.get("systemInstruction") or {}).get("parts", []))
k = si.rfind("\n<loaded_context>\n")
system = ""
if k >= 0:
    system = si[k + 1:]
    if not system.endswith("</loaded_context>"):
        sys.exit("the system instruction goes on after its </loaded_context>")
user_text = "".join(p.get("text", "") for p in first["contents"][0]["parts"])
end = user_text.rfind("\n</session_context>")
k = user_text.find("\n<loaded_context>\n")
user = user_text[k + 1:end] if 0 <= k < end else ""
def write(name, text):
    with open(dest + "/" + name, "w", encoding="utf-8", newline="") as f:
        f.write(text.replace(run, "<run>"))
write("oracle.system", system)
write("oracle.user", user)
read = tomllib.load(open(dest + "/case.toml", "rb")).get("run", {}).get("read")
if read:
    outputs = [p["functionResponse"]["response"].get("output", "") for r in reqs for c in r["contents"]
               for p in c["parts"] if p.get("functionResponse", {}).get("name") == "read_file"]
    if not outputs:
        sys.exit("no read_file result in " + out)
    marker = "\n\n--- Newly Discovered Project Context ---\n"
    k = outputs[0].find(marker)
    write("oracle.read", outputs[0][k:] if k >= 0 else "")
PY
}

record_qwen() {  # case dir, scratch out
  local dir=$1 out=$2 args=() more=${QWEN_ORACLE:-$ORACLE/more}
  mapfile -t args < <(python3 - "$dir/case.toml" <<'PY'
import sys, tomllib
run = tomllib.load(open(sys.argv[1], "rb")).get("run", {})
print("-C"); print(run.get("cwd", "."))
if run.get("read"):
    print("-R"); print(run["read"])
PY
)
  with_run "$dir" "$out"
  "$more/capture_qwen.sh" "${args[@]}" "$out.fix" "$out" >"$out.log" 2>&1 || true
  grep -q 'qwen rc=0' "$out/stderr" || { cat "$out.log" "$out/stderr" >&2; echo "qwen failed on $dir" >&2; return 1; }
  python3 - "$out" "$dir" <<'PY'
import glob, json, os, re, sys, tomllib
import blake3
out, case = sys.argv[1], sys.argv[2]
run = out + "/run"
conf = tomllib.load(open(case + "/case.toml", "rb")).get("run", {})
token = lambda text: "<prose:blake3=%s>" % blake3.blake3(text.encode()).hexdigest()
def text(content):
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content or [])
reqs = sorted(glob.glob(out + "/cap/req-*.json"), key=lambda f: int(f.rsplit("-", 1)[1].split(".")[0]))
reqs = [json.load(open(f, encoding="utf-8")) for f in reqs]
reqs = [r for r in reqs if r.get("messages")]
if not reqs:
    sys.exit("no chat request captured in " + out)
END = re.compile(r"--- End of (?:Context|Rule) from: [^\n]*? ---")
def context(req):
    first = req["messages"][0]
    system = text(first.get("content")) if first.get("role") == "system" else ""
    starts = [k for k in (system.find("--- Context from: "), system.find("--- Rule from: ")) if k >= 0]
    if not starts:
        return ""
    start, end = min(starts), [m.end() for m in END.finditer(system)][-1]
    if system[max(0, start - 7):start] != "\n\n---\n\n":
        sys.exit("the context does not follow Qwen's `---` separator in " + out)
    return system[start:end]
main = context(reqs[0])
for i, req in enumerate(reqs[1:], 2):
    other = context(req)
    if other and other != main:
        sys.exit("request %d carries another context than the first in %s" % (i, out))
cwd = os.path.normpath(os.path.join(run, "proj", conf.get("cwd", ".")))
def written_by_qwen(shown):
    # The text of the output-language file shown as `shown` (relative to the cwd) when Qwen
    # wrote it itself during the run (the fixture has no such file or another text), else None.
    disk = os.path.normpath(os.path.join(cwd, shown))
    rel = os.path.relpath(disk, run)
    fixture = os.path.join(case, rel) if rel.split("/")[0] in ("proj", "home") else os.path.join(case, "above", rel)
    read = lambda path: open(path, encoding="utf-8").read() if os.path.isfile(path) else None
    text = read(disk)
    return text if text is not None and text != read(fixture) else None
def prose(m):
    shown, body = m.group(1), m.group(2)
    wording = written_by_qwen(shown) if os.path.basename(shown) == "output-language.md" else None
    if wording is not None:
        if wording.strip() not in body:
            sys.exit("Qwen's output-language text is not in its block in " + out)
        body = body.replace(wording.strip(), token(wording.strip()))
    return "--- Context from: %s ---\n%s\n--- End of Context from: %s ---" % (shown, body, shown)
main = re.sub(r"--- Context from: ([^\n]*?) ---\n(.*?)\n--- End of Context from: \1 ---", prose, main, flags=re.S)
def write(name, data):
    with open(case + "/" + name, "w", encoding="utf-8", newline="") as f:
        f.write(data.replace(run, "<run>"))
write("oracle.system", main)
if conf.get("read"):
    results = [text(m.get("content")) for r in reqs for m in r["messages"]
               if m.get("role") == "tool" and m.get("tool_call_id") == "call_fake_1"]
    if not results:
        sys.exit("no read_file result in " + out)
    k = results[0].rfind("\n\n<system-reminder>\n")
    write("oracle.read", results[0][k:] if k >= 0 else "")
PY
}

record_copilot() {  # case dir, scratch out
  local dir=$1 out=$2 args=() refused
  mapfile -t args < <(python3 - "$dir/case.toml" <<'PY'
import sys, tomllib
run = tomllib.load(open(sys.argv[1], "rb")).get("run", {})
print("-C"); print(run.get("cwd", "."))
if run.get("read"):
    print("-R"); print(run["read"])
PY
)
  refused=$(python3 -c 'import sys, tomllib; print(int(tomllib.load(open(sys.argv[1], "rb"))["run"].get("refused", False)))' "$dir/case.toml")
  "$ORACLE/more/capture_copilot.sh" "${args[@]}" "$dir" "$out" >"$out.log" 2>&1 || true
  if [ "$refused" = 1 ]; then
    grep -q 'copilot rc=1' "$out/stderr" || { cat "$out.log" "$out/stderr" >&2; echo "copilot was expected to refuse on $dir" >&2; return 1; }
  else
    grep -q 'copilot rc=0' "$out/stderr" || { cat "$out.log" "$out/stderr" >&2; echo "copilot failed on $dir" >&2; return 1; }
  fi
  python3 - "$out" "$dir" "$refused" <<'PY'
import glob, json, re, sys, tomllib
import blake3
out, case, refused = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
run = out + "/run"
token = lambda text: "<prose:blake3=%s>" % blake3.blake3(text.encode()).hexdigest()
def write(name, text):
    with open(case + "/" + name, "w", encoding="utf-8", newline="") as f:
        f.write(text.replace(run, "<run>"))
reqs = sorted(glob.glob(out + "/cap/req-*.json"), key=lambda f: int(f.rsplit("-", 1)[1].split(".")[0]))
reqs = [json.load(open(f, encoding="utf-8")) for f in reqs]
if refused:
    if reqs:
        sys.exit("copilot sent a request in a case it should refuse: " + out)
    events = [json.loads(line) for line in open(out + "/stdout", encoding="utf-8") if line.startswith("{")]
    warnings = [e["data"].get("warningType") for e in events if e.get("type") == "session.warning"]
    if not warnings:
        sys.exit("no session.warning in " + out + "/stdout")
    write("oracle.refused", warnings[0] + "\n")
    sys.exit(0)
reqs = [r for r in reqs if r.get("messages")]
if not reqs:
    sys.exit("no chat request captured in " + out)
system = reqs[0]["messages"][0]
if system.get("role") != "system" or not isinstance(system.get("content"), str):
    sys.exit("the first message is not a system text in " + out)
text = system["content"]
start, end = text.find("</tools>\n\n"), text.find("\n<system_notifications>")
if start < 0 or end < start:
    sys.exit("no tools section followed by <system_notifications> in " + out)
section = text[start + len("</tools>\n\n"):end]
# The applyTo table: its header row is the line before a row of dashes; Copilot's
# introduction runs from the blank line before it. Both become one token.
rows = list(re.finditer(r"^(\| [^\n]*\|)\n(\|(?: -+ \|)+)$", section, re.M))
if rows:
    head = rows[-1]
    intro = section.rfind("\n\n", 0, head.start())
    intro = 0 if intro < 0 else intro + 2
    section = section[:intro] + token(section[intro:head.end()]) + section[head.end():]
write("oracle.system", section)
read = tomllib.load(open(case + "/case.toml", "rb")).get("run", {}).get("read")
if read:
    last = reqs[-1]["messages"]
    tools = [i for i, m in enumerate(last) if m.get("role") == "tool"]
    if not tools:
        sys.exit("the view was not answered in " + out)
    after = last[tools[0] + 1] if tools[0] + 1 < len(last) else None
    added = after["content"] if after and after.get("role") == "user" else ""
    parts = set()
    def sentence(m):
        parts.add((m.group(1), m.group(3)))
        return "<system_reminder>\n" + token(m.group(1)) + m.group(2) + token(m.group(3)) + "\n\n"
    added = re.sub(r"<system_reminder>\n(.*? )(\S+\.md)(\.[^\n]*)\n\n", sentence, added)
    if len(parts) > 1:
        sys.exit("the sentence around the attached files' paths differs between files in " + out)
    write("oracle.read", added)
PY
}

record_kilo() {  # case dir, scratch out
  local dir=$1 out=$2 args=()
  mapfile -t args < <(python3 - "$dir/case.toml" <<'PY'
import sys, tomllib
run = tomllib.load(open(sys.argv[1], "rb")).get("run", {})
print("-C"); print(run.get("cwd", "."))
if run.get("read"):
    print("-R"); print(run["read"])
PY
)
  "$ORACLE/more/capture_kilo.sh" "${args[@]}" "$dir" "$out" >"$out.log" 2>&1 || true
  grep -q 'kilo rc=0' "$out/stderr" || { cat "$out.log" "$out/stderr" >&2; echo "kilo failed on $dir" >&2; return 1; }
  python3 - "$out" "$dir" <<'PY'
import glob, json, sys, tomllib
out, case = sys.argv[1], sys.argv[2]
run = out + "/run"
def write(name, text):
    with open(case + "/" + name, "w", encoding="utf-8", newline="") as f:
        f.write(text.replace(run, "<run>"))
reqs = sorted(glob.glob(out + "/cap/req-*.json"), key=lambda f: int(f.rsplit("-", 1)[1].split(".")[0]))
reqs = [json.load(open(f, encoding="utf-8")) for f in reqs]
reqs = [r for r in reqs if r.get("messages")]
if not reqs:
    sys.exit("no chat request captured in " + out)
systems = {r["messages"][0]["content"] for r in reqs if r["messages"][0].get("role") == "system"}
if len(systems) != 1:
    sys.exit("the requests' system messages differ (or there is none) in " + out)
text = systems.pop()
end = text.find("\nSkills provide specialized instructions")
if end < 0:
    sys.exit("no skills part after the instructions in " + out)
start = text.find("\nInstructions from: ")
write("oracle.system", text[start + 1:end] if 0 <= start < end else "")
if tomllib.load(open(case + "/case.toml", "rb")).get("run", {}).get("read"):
    results = [m.get("content") for m in reqs[-1]["messages"] if m.get("role") == "tool"]
    if not results or not isinstance(results[0], str):
        sys.exit("no read result in " + out)
    k = results[0].rfind("\n\n<system-reminder>\n")
    write("oracle.read", results[0][k:] if k >= 0 else "")
PY
}

record_cline() {  # case dir, scratch out
  local dir=$1 out=$2 args=()
  mapfile -t args < <(python3 - "$dir/case.toml" <<'PY'
import sys, tomllib
run = tomllib.load(open(sys.argv[1], "rb")).get("run", {})
print("-C"); print(run.get("cwd", "."))
if run.get("read"):
    print("-R"); print(run["read"])
PY
)
  "$ORACLE/more/capture_cline.sh" "${args[@]}" "$dir" "$out" >"$out.log" 2>&1 || true
  grep -q 'cline rc=0' "$out/stderr" || { cat "$out.log" "$out/stderr" >&2; echo "cline failed on $dir" >&2; return 1; }
  python3 - "$out" "$dir" <<'PY'
import glob, json, os, sys, tomllib
out, case = sys.argv[1], sys.argv[2]
run = out + "/run"
conf = tomllib.load(open(case + "/case.toml", "rb")).get("run", {})
def text(content):
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content or [])
reqs = sorted(glob.glob(out + "/cap/req-*.json"), key=lambda f: int(f.rsplit("-", 1)[1].split(".")[0]))
reqs = [json.load(open(f, encoding="utf-8")) for f in reqs]
reqs = [r for r in reqs if r.get("messages")]
if not reqs:
    sys.exit("no chat request captured in " + out)
def rules(req):
    first = req["messages"][0]
    if first.get("role") != "system":
        sys.exit("the first message is not the system prompt in " + out)
    system = text(first.get("content"))
    start = system.find("\n\n# Rules\n")
    return system[start + 2:] if start >= 0 else ""
main = rules(reqs[0])
for i, req in enumerate(reqs[1:], 2):
    if rules(req) != main:
        sys.exit("request %d carries other rules than the first in %s" % (i, out))
def write(name, data):
    with open(case + "/" + name, "w", encoding="utf-8", newline="") as f:
        f.write(data.replace(run, "<run>"))
write("oracle.system", main)
if conf.get("read"):
    # What the read_files result holds besides the file's own text (empty: nothing).
    results = [text(m.get("content")) for r in reqs for m in r["messages"] if m.get("role") == "tool"]
    if not results:
        sys.exit("no read_files result in " + out)
    own = open(os.path.join(run, "proj", conf["read"]), encoding="utf-8").read()
    result = results[0]
    try:
        result = json.dumps(json.loads(result), indent=1, ensure_ascii=False) + "\n"
    except ValueError:
        pass
    write("oracle.read", result.replace(own.rstrip("\n"), "<file>"))
PY
}

record_continue() {  # case dir, scratch out
  local dir=$1 out=$2 args=()
  mapfile -t args < <(python3 - "$dir/case.toml" <<'PY'
import sys, tomllib
run = tomllib.load(open(sys.argv[1], "rb")).get("run", {})
print("-C"); print(run.get("cwd", "."))
if run.get("read"):
    print("-R"); print(run["read"])
PY
)
  "$ORACLE/more/capture_continue.sh" "${args[@]}" "$dir" "$out" >"$out.log" 2>&1 || true
  grep -q 'continue rc=0' "$out/stderr" || { cat "$out.log" "$out/stderr" >&2; echo "continue failed on $dir" >&2; return 1; }
  python3 - "$out" "$dir" <<'PY'
import glob, json, os, sys, tomllib
out, case = sys.argv[1], sys.argv[2]
run = out + "/run"
conf = tomllib.load(open(case + "/case.toml", "rb")).get("run", {})
def text(content):
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content or [])
reqs = sorted(glob.glob(out + "/cap/req-*.json"), key=lambda f: int(f.rsplit("-", 1)[1].split(".")[0]))
reqs = [json.load(open(f, encoding="utf-8")) for f in reqs]
reqs = [r for r in reqs if r.get("messages")]
if not reqs:
    sys.exit("no chat request captured in " + out)
OPEN = '<context name="userRules">'
def rules(req):
    first = req["messages"][0]
    if first.get("role") != "system":
        sys.exit("the first message is not the system message in " + out)
    system = text(first.get("content"))
    start = system.find("\n\n" + OPEN)
    if start < 0:
        return ""
    if not system.endswith("\n</context>"):
        sys.exit("the userRules context does not end the system message in " + out)
    return system[start + 2:]
main = rules(reqs[0])
for i, req in enumerate(reqs[1:], 2):
    if rules(req) != main:
        sys.exit("request %d carries other rules than the first in %s" % (i, out))
def write(name, data):
    with open(case + "/" + name, "w", encoding="utf-8", newline="") as f:
        f.write(data.replace(run, "<run>"))
write("oracle.system", main)
if conf.get("read"):
    # What the Read result holds, with the file's own text written as <file>.
    results = [text(m.get("content")) for r in reqs for m in r["messages"] if m.get("role") == "tool"]
    if not results:
        sys.exit("no Read result in " + out)
    own = open(os.path.join(run, "proj", conf["read"]), encoding="utf-8").read()
    write("oracle.read", results[0].replace(own.rstrip("\n"), "<file>"))
PY
}

record_aider() {  # case dir, scratch out
  local dir=$1 out=$2 extra="" n
  extra=$(python3 -c 'import sys, tomllib; print(" ".join("--read " + c.split("=", 1)[1] for c in tomllib.load(open(sys.argv[1], "rb")).get("run", {}).get("config", []) if c.startswith("read=")))' "$dir/case.toml")
  local cwd; cwd=$(python3 -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb")).get("run", {}).get("cwd", "."))' "$dir/case.toml")
  local refused; refused=$(python3 -c 'import sys, tomllib; print(int(tomllib.load(open(sys.argv[1], "rb"))["run"].get("refused", False)))' "$dir/case.toml")
  local env=(); mapfile -t env < <(python3 -c 'import sys, tomllib; sys.stdout.write("".join(e + "\n" for e in tomllib.load(open(sys.argv[1], "rb")).get("run", {}).get("env", [])))' "$dir/case.toml")
  rm -f "$dir"/oracle.user "$dir"/oracle.user-* "$dir"/oracle.refused
  for n in 1 2 3 4 5; do
    env "${env[@]}" AI_EXTRA="$extra" "$ORACLE/more/capture_aider.sh" -C "$cwd" "$dir" "$out.$n" >"$out.$n.log" 2>&1 || true
    if [ "$refused" = 1 ]; then
      # Aider stops at its argument parser: exit 2, no request at all.
      grep -q 'aider rc=2' "$out.$n/stderr" && [ -z "$(ls "$out.$n/cap" | grep 'req-')" ] ||
        { cat "$out.$n.log" "$out.$n/stderr" >&2; echo "aider was expected to refuse on $dir" >&2; return 1; }
      echo "exit 2, no request" >"$dir/oracle.refused"
      return 0
    fi
    grep -q 'aider rc=0' "$out.$n/stderr" || { cat "$out.$n.log" "$out.$n/stderr" >&2; echo "aider failed on $dir" >&2; return 1; }
    python3 - "$out.$n" "$dir" <<'PY' || return 1
import glob, json, sys
import blake3
out, case = sys.argv[1], sys.argv[2]
run = out + "/run"
token = lambda text: "<prose:blake3=%s>" % blake3.blake3(text.encode()).hexdigest()
reqs = sorted(glob.glob(out + "/cap/req-*.json"), key=lambda f: int(f.rsplit("-", 1)[1].split(".")[0]))
reqs = [json.load(open(f, encoding="utf-8")) for f in reqs]
reqs = [r for r in reqs if r.get("messages")]
if not reqs:
    sys.exit("no chat request captured in " + out)
msgs = reqs[0]["messages"]
if len(msgs) not in (5, 7) or any(m["role"] != r for m, r in zip(msgs, ["system"] + ["user", "assistant"] * ((len(msgs) - 3) // 2))):
    sys.exit("not the message shape of a first Aider request in " + out)
text = msgs[1]["content"] if len(msgs) == 7 else ""
if text:
    cut = text.index("\n\n") + 1
    text = token(text[:cut]) + text[cut:]
text = text.replace(run, "<run>")
seen = sorted(glob.glob(case + "/oracle.user*"))
if any(open(f, encoding="utf-8", newline="").read() == text for f in seen):
    sys.exit(0)
name = "oracle.user" if not seen else "oracle.user-%d" % (len(seen) + 1)
with open(case + "/" + name, "w", encoding="utf-8", newline="") as f:
    f.write(text)
PY
    # One file or none: nothing to order, one capture is the case.
    [ "$n" = 1 ] && [ "$(grep -c '(read-only)\.$' "$out.$n/stdout")" -lt 2 ] && break
  done
  return 0
}

record_pi() {  # case dir, scratch out
  local dir=$1 out=$2 args=() env=() d
  mapfile -t args < <(python3 - "$dir/case.toml" <<'PY'
import sys, tomllib
run = tomllib.load(open(sys.argv[1], "rb")).get("run", {})
print("-C"); print(run.get("cwd", "."))
if run.get("read"):
    print("-R"); print(run["read"])
PY
)
  mapfile -t env < <(python3 -c 'import sys, tomllib; sys.stdout.write("".join(e.replace("<run>", sys.argv[2]) + "\n" for e in tomllib.load(open(sys.argv[1], "rb")).get("run", {}).get("env", [])))' "$dir/case.toml" "$out/run")
  # pi walks to `/`: a context file above the run directory would be in the recording.
  d=$out
  while :; do
    for n in AGENTS.md AGENTS.MD CLAUDE.md CLAUDE.MD; do
      [ -e "$d/$n" ] && { echo "record-agents.sh: $d/$n is above the run and pi would send it" >&2; return 1; }
    done
    [ "$d" = / ] && break; d=$(dirname "$d")
  done
  with_run "$dir" "$out"
  env "${env[@]}" "$ORACLE/more/capture_pi.sh" "${args[@]}" "$out.fix" "$out" >"$out.log" 2>&1 || true
  grep -q 'pi rc=0' "$out/stderr" || { cat "$out.log" "$out/stderr" >&2; echo "pi failed on $dir" >&2; return 1; }
  python3 - "$out" "$dir" "${AO_CACHE:-/tmp/agent-oracle-more}/pi/node_modules/@mariozechner/pi-coding-agent" <<'PY'
import glob, json, os, re, sys, tomllib
import blake3
out, case, package = sys.argv[1], sys.argv[2], sys.argv[3]
run = out + "/run"
conf = tomllib.load(open(case + "/case.toml", "rb")).get("run", {})
cwd = os.path.normpath(os.path.join(run, "proj", conf.get("cwd", ".")))
env = dict(e.replace("<run>", run).split("=", 1) for e in conf.get("env", []))
agent_dir = env.get("PI_CODING_AGENT_DIR", run + "/home/.pi/agent")
token = lambda text: "<prose:blake3=%s>" % blake3.blake3(text.encode()).hexdigest()
def text(content):
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content or [])
def first_text(*paths):
    # pi's resolvePromptInput: the first that exists; one that cannot be read is its own path.
    for p in paths:
        if os.path.exists(p):
            try:
                return open(p, encoding="utf-8", errors="replace").read()
            except OSError:
                return p
    return ""
reqs = sorted(glob.glob(out + "/cap/req-*.json"), key=lambda f: int(f.rsplit("-", 1)[1].split(".")[0]))
reqs = [json.load(open(f, encoding="utf-8")) for f in reqs]
reqs = [r for r in reqs if r.get("messages")]
if not reqs:
    sys.exit("no chat request captured in " + out)
systems = {r["messages"][0]["content"] for r in reqs if r["messages"][0].get("role") == "system"}
if len(systems) != 1:
    sys.exit("the requests' system messages differ (or there is none) in " + out)
system = systems.pop()
# pi's own wording, kept as tokens: the skills introduction (the lines between the blank line
# that opens the skills part and <available_skills>), and the base prompt when no SYSTEM.md
# replaced it (up to the first part that follows it), its package folder written as <pi>.
k = system.find("\n\n<available_skills>\n")
skills_at = -1
custom = first_text(cwd + "/.pi/SYSTEM.md", agent_dir + "/SYSTEM.md")
append = first_text(cwd + "/.pi/APPEND_SYSTEM.md", agent_dir + "/APPEND_SYSTEM.md")
if k >= 0:
    skills_at = system.rfind("\n\n", 0, k)
    system = system[:skills_at + 2] + token(system[skills_at + 2:k]) + system[k:]
if not custom:
    ends = [system.find(m) for m in ("\n\n" + append if append else None, "\n\n# Project Context\n\n") if m]
    ends += [skills_at, system.rfind("\nCurrent date: ")]
    end = min(e for e in ends if e >= 0)
    system = token(system[:end].replace(package, "<pi>")) + system[end:]
elif not system.startswith(custom):
    sys.exit("the system message does not start with the SYSTEM.md in " + out)
system, n = re.subn(r"\nCurrent date: \d{4}-\d{2}-\d{2}\nCurrent working directory: ", "\nCurrent date: <date>\nCurrent working directory: ", system)
if n != 1:
    sys.exit("no date line in " + out)
def write(name, data):
    with open(case + "/" + name, "w", encoding="utf-8", newline="") as f:
        f.write(data.replace(run, "<run>"))
write("oracle.system", system)
if conf.get("read"):
    results = [text(m.get("content")) for m in reqs[-1]["messages"] if m.get("role") == "tool"]
    if not results:
        sys.exit("no read result in " + out)
    own = open(os.path.join(run, "proj", conf["read"]), encoding="utf-8").read()
    write("oracle.read", results[0].replace(own.rstrip("\n"), "<file>"))
PY
}

record_auggie() {  # case dir, scratch out
  local dir=$1 out=$2 cwd
  cwd=$(python3 -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb")).get("run", {}).get("cwd", "."))' "$dir/case.toml")
  "$ORACLE/more/capture_auggie.sh" -C "$cwd" "$dir" "$out" >"$out.log" 2>&1 || true
  grep -q 'auggie rc=0' "$out/stderr" || { cat "$out.log" "$out/stderr" >&2; echo "auggie failed on $dir" >&2; return 1; }
  python3 - "$out" "$dir" <<'PY'
import glob, json, sys
from blake3 import blake3
out, case = sys.argv[1], sys.argv[2]
run = out + "/run"
reqs = [json.load(open(f, encoding="utf-8")) for f in glob.glob(out + "/aug/req-*.json")]
chats = [r for r in reqs if isinstance(r, dict) and "rules" in r]
if len(chats) != 1:
    sys.exit("expected one chat-stream request in %s, found %d" % (out, len(chats)))
req = chats[0]
fields = {k: req[k] for k in ("user_guidelines", "workspace_guidelines", "rules", "skills")}
builtin = fields["rules"][0]
if builtin.get("path") != "non-interactive-prompt.md":
    sys.exit("the first rule is not the built-in one in " + out)
builtin["content"] = "<prose:blake3=%s>" % blake3(builtin["content"].encode()).hexdigest()
text = json.dumps(fields, ensure_ascii=False, separators=(",", ":")).replace(run, "<run>")
with open(case + "/oracle.request", "w", encoding="utf-8", newline="") as f:
    f.write(text)
PY
}

for id in "${IDS[@]}"; do
  agent=${id%%/*}
  case $agent in
    codex) record_codex "$CASES/$id" "$SCRATCH/${id//\//_}" ;;
    gemini) record_gemini "$CASES/$id" "$SCRATCH/${id//\//_}" ;;
    claude-code) record_cc "$CASES/$id" "$SCRATCH/${id//\//_}" ;;
    copilot) record_copilot "$CASES/$id" "$SCRATCH/${id//\//_}" ;;
    qwen-code) record_qwen "$CASES/$id" "$SCRATCH/${id//\//_}" ;;
    kilo) record_kilo "$CASES/$id" "$SCRATCH/${id//\//_}" ;;
    cline) record_cline "$CASES/$id" "$SCRATCH/${id//\//_}" ;;
    continue) record_continue "$CASES/$id" "$SCRATCH/${id//\//_}" ;;
    pi) record_pi "$CASES/$id" "$SCRATCH/${id//\//_}" ;;
    aider) record_aider "$CASES/$id" "$SCRATCH/${id//\//_}" ;;
    auggie) record_auggie "$CASES/$id" "$SCRATCH/${id//\//_}" ;;
    *) echo "record-agents.sh: no recorder for $agent yet" >&2; exit 1 ;;
  esac
  # The order the disk listed each folder of the run in (Claude Code, Kilo and Cline take
  # some folders as listed): the runners lay the case out in that order.
  python3 "$HERE/listing.py" "$SCRATCH/${id//\//_}/run" "$CASES/$id" proj=proj home=home .=above
  echo "recorded $id"
done
