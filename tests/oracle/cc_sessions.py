#!/usr/bin/env python3
"""Record tests/agents/claude-code/sessions/<case>/ from the REAL Claude Code 2.1.332.

Each case is a fixture, a scripted fake model (one tool call, a list of parallel calls, or []
for a text answer, per tool-offering request, in order) and prompts (the first `-p`, then
`--continue -p` follow-ups). capture_cc.sh (../shared/oracle/agents) runs Claude Code offline
and keeps every request body (cap/req-N.json) and the transcript
(~/.claude/projects/<slug>/<id>.jsonl). Two files are kept per case:

- transcript.jsonl: the transcript with only the records `session rules` reads, every path
  under the run directory written as /w, and every text of Claude Code's own (system
  reminders' prose, the rule block's preamble and labels, tool results' wording, the
  compaction summary) replaced by a placeholder OF THE SAME BYTE LENGTH
  (`[<sha256 prefix>....]`): byte counts stay true and Claude Code's texts are not copied.
- files.json: the fixture's files as the session left them, under /w (test input).
- expected.json: per main-loop request, the bytes of every rule file present in it, computed
  HERE from the captured request bodies (not from the transcript, not from ctxgraph): each
  file's known texts (the fixture's, and the text after a scripted change) searched in the
  request in the three forms Claude Code sends them (docs/profiles/claude-code.md CC41): a
  first-message entry `Contents of P (label):\n\n<text>`, an attachment
  `<system-reminder>\nContents of P:\n\n<text>\n\n</system-reminder>`, a changed-on-disk note
  `<system-reminder>\nNote: P changed on disk…\n<numbered lines>\n</system-reminder>`.
  The requests of a `/compact` run (its summarisation requests) are not main-loop requests.

usage: tests/oracle/cc_sessions.py [CASE...]   (AGENTS_ORACLE: the oracle directory)
"""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
ORACLE = os.environ.get("AGENTS_ORACLE") or next(
    p for p in (os.path.join(REPO, "..", "shared", "oracle", "agents"), "/work/shared/oracle/agents")
    if os.path.isdir(p))
OUT = os.path.join(REPO, "tests", "agents", "claude-code", "sessions")
ROOT = "/w"  # the run directory, as the committed files write it


def read(path):
    return {"name": "Read", "input": {"file_path": "<proj>/" + path}}


CASES = {
    # A Read that attaches a nested CLAUDE.md and a `paths:` rule, a Write that attaches
    # another, a rule file changed on disk (a Bash append), parallel reads, a --continue
    # follow-up, /compact, and the same Read after it.
    "read-write-change-compact": {
        "files": {
            "proj/CLAUDE.md": "# Root\nSESS-ROOT: keep answers short.\n",
            "proj/CLAUDE.local.md": "SESS-LOCAL: private notes.\n",
            "proj/.claude/rules/always.md": "SESS-ALWAYS: always rule.\n",
            "proj/.claude/rules/ts.md": "---\npaths: src/**/*.ts\n---\nSESS-TS: typescript rule.\n",
            "proj/.claude/rules/docs.md": "---\npaths: \"**/*.md\"\n---\nSESS-DOCS: docs rule.\n",
            "proj/src/api/CLAUDE.md": "SESS-API: api folder rules.\n",
            "proj/pkg/CLAUDE.md": "SESS-PKG: pkg rules.\n",
            "proj/src/api/handler.ts": "export const h = 1;\n",
            "proj/src/util.ts": "export const u = 2;\n",
            "proj/docs/guide.md": "# Guide\ntext\n",
            "home/.claude/CLAUDE.md": "SESS-USER: user rule.\n",
        },
        # Texts a rule file has after a scripted change.
        "changed": {"proj/src/api/CLAUDE.md": "SESS-API: api folder rules.\nSESS-API2: changed.\n"},
        "tools": [
            read("src/api/handler.ts"),
            {"name": "Write", "input": {"file_path": "<proj>/pkg/new.py", "content": "x = 1\n"}},
            {"name": "Bash", "input": {"command": "printf 'SESS-API2: changed.\\n' >> <proj>/src/api/CLAUDE.md",
                                       "description": "change a rule file"}},
            read("src/api/handler.ts"),
            [read("src/util.ts"), read("docs/guide.md")],
            [],
            read("pkg/new.py"),
            [],
            [], [],  # /compact's two summarisation requests
            read("src/api/handler.ts"),
            [],
        ],
        "prompts": ["start", "more", "/compact", "after"],
    },
    # Parallel reads into two folders with their own CLAUDE.md, a `paths:` rule matched by
    # both, a second read in a folder already attached, an empty CLAUDE.md, and a --continue
    # follow-up that reads again.
    "parallel-nested": {
        "files": {
            "proj/CLAUDE.md": "SESS-ROOT2: root.\n",
            "proj/.claude/rules/py.md": "---\npaths: \"**/*.py\"\n---\nSESS-PY: python rule.\n",
            "proj/a/CLAUDE.md": "SESS-A: folder a.\n",
            "proj/b/CLAUDE.md": "SESS-B: folder b, a longer text than a's.\n",
            "proj/c/CLAUDE.md": "",
            "proj/a/x.py": "x = 1\n",
            "proj/a/z.py": "z = 1\n",
            "proj/b/y.py": "y = 1\n",
            "proj/c/w.txt": "w\n",
        },
        "changed": {},
        "tools": [
            [read("a/x.py"), read("b/y.py")],
            read("a/z.py"),
            read("c/w.txt"),
            [],
            read("b/y.py"),
            [],
        ],
        "prompts": ["start", "again"],
    },
    # A skill and a command invoked through the Skill tool, with an output style: the
    # style's body in the first message and its reminder after every tool result.
    "skills-style": {
        "files": {
            "proj/CLAUDE.md": "SESS-ROOT3: root.\n",
            "proj/.claude/skills/deploy/SKILL.md":
                "---\nname: deploy-app\ndescription: SESS-SKILL deploys the app.\n---\n# Deploy\nSESS-SKILL-BODY: run make deploy.\n",
            "proj/.claude/commands/hello.md": "---\ndescription: SESS-CMD says hello.\n---\nSay hello to $ARGUMENTS. SESS-CMD-BODY\n",
            "proj/.claude/output-styles/terse.md":
                "---\nname: Terse Style\ndescription: short answers\n---\nSESS-STYLE-BODY: Answer in one line.\n",
            "proj/.claude/settings.local.json": "{\"outputStyle\": \"Terse Style\"}\n",
            "proj/src/a.ts": "x\n",
        },
        "changed": {},
        # The texts Claude Code sends for an invoked skill or command: the skill's folder
        # line and body (front matter cut), the command's body with its argument.
        "bodies": {
            ROOT + "/proj/.claude/skills/deploy/SKILL.md":
                "Base directory for this skill: " + ROOT + "/proj/.claude/skills/deploy\n\n# Deploy\nSESS-SKILL-BODY: run make deploy.\n",
            "(skill hello)": "Say hello to world. SESS-CMD-BODY\n",
        },
        "styles": ["Terse Style"],
        "tools": [
            {"name": "Skill", "input": {"skill": "deploy-app"}},
            {"name": "Skill", "input": {"skill": "hello", "args": "world"}},
            read("src/a.ts"),
            [],
        ],
        "prompts": ["start"],
    },
}


def placeholder(text):
    """A stand-in for `text` of the same UTF-8 length, naming it by hash."""
    n = len(text.encode())
    if n < 2:
        return "." * n
    digest = hashlib.sha256(text.encode()).hexdigest()[: min(n - 2, 16)]
    return "[" + digest + "." * (n - 2 - len(digest)) + "]"


BODIES, STYLES = {}, []


def rule_spans(s, versions):
    """(start, end, keep) spans of the rule texts in s: keep = sub-spans to leave as they are
    (the rest of the span is Claude Code's wording). Used for the expectation and the scrub."""
    spans = []
    for label, body in BODIES.items():
        if s == body:
            return [(0, len(s), [(0, len(s))], label)]
    for style in STYLES:
        label = "(output style %s)" % style
        for m in re.finditer(r"<system-reminder>\n# Output Style: " + re.escape(style) + r"\n.*?\n</system-reminder>", s, re.S):
            spans.append((m.start(), m.end(), [(m.start(), m.end())], label))
        for m in re.finditer(r"<system-reminder>\n" + re.escape(style) + r" output style is active([^\n]*)\n</system-reminder>", s):
            prose = m.span(1)
            spans.append((m.start(), m.end(), [(m.start(), prose[0]), (prose[1], m.end())], label))
    for path, texts in versions.items():
        p = re.escape(path)
        for text in texts:
            t = re.escape(text)
            for m in re.finditer(r"Contents of " + p + r" \(([^()\n]*)\):\n\n" + t + r"(?=\n\nContents of |\n</system-reminder>)", s):
                label = m.span(1)
                spans.append((m.start(), m.end(), [(m.start(), label[0]), (label[1], m.end())], path))
            lit = "<system-reminder>\nContents of " + path + ":\n\n" + text + "\n\n</system-reminder>"
            for m in re.finditer(re.escape(lit), s):
                spans.append((m.start(), m.end(), [(m.start(), m.end())], path))
        for m in re.finditer(r"<system-reminder>\nNote: " + p + r" changed on disk([^\n]*)\n((?:\d+\t[^\n]*\n)+)</system-reminder>", s):
            prose = m.span(1)
            spans.append((m.start(), m.end(), [(m.start(), prose[0]), (prose[1], m.end())], path))
    return spans


def scrub(s, versions):
    keep = []
    for _, _, parts, _ in rule_spans(s, versions):
        keep.extend(parts)
    if s.startswith("<system-reminder>\n"):
        keep.append((0, len("<system-reminder>\n")))
    keep.sort()
    out, at = [], 0
    for start, end in keep:
        if end <= at:
            continue
        start = max(start, at)
        out.append(placeholder(s[at:start]))
        out.append(s[start:end])
        at = end
    out.append(placeholder(s[at:]))
    return "".join(out)


def strings(content):
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for block in content:
            if isinstance(block.get("text"), str):
                yield block["text"]
            if "content" in block:
                yield from strings(block["content"])


def scrub_content(content, versions):
    if isinstance(content, str):
        return scrub(content, versions)
    out = []
    for block in content:
        b = {k: block[k] for k in ("type", "tool_use_id") if k in block}
        if isinstance(block.get("text"), str):
            b["text"] = scrub(block["text"], versions)
        if "content" in block:
            b["content"] = scrub_content(block["content"], versions)
        out.append(b)
    return out


def keep_record(d, versions):
    """The record as committed, or None when `session rules` does not read it."""
    t = d.get("type")
    if t == "api-request":
        r = {"type": t, "id": d["id"], "keep": d.get("keep", 0), "tail": d["tail"]}
        if d.get("base"):
            r["base"] = d["base"]
        return r
    if t == "api-request-blob":
        m = d["message"]
        return {"type": t, "hash": d["hash"], "message": {"role": m["role"], "content": scrub_content(m["content"], versions)}}
    if t == "attachment":
        a = d["attachment"]
        if a.get("type") == "instructions":
            return {"type": t, "attachment": {"type": "instructions", "files": [
                {"path": f["path"], "type": f.get("type"), "content": f["content"]} for f in a["files"]]}}
        if a.get("type") == "nested_memory":
            return {"type": t, "attachment": {"type": "nested_memory", "path": a["path"]}}
        if a.get("type") == "output_style":
            return {"type": t, "attachment": {"type": "output_style", "style": a["style"]}}
        if a.get("type") == "output_style_instructions":
            return {"type": t, "attachment": {"type": "output_style_instructions", "style": {"name": a["style"]["name"]}}}
        return None
    if t == "user" and d.get("isMeta") and d.get("sourceToolUseID"):
        return {"type": t, "isMeta": True, "sourceToolUseID": d["sourceToolUseID"],
                "message": {"role": "user", "content": scrub_content(d["message"]["content"], versions)}}
    if t == "system" and d.get("subtype") == "compact_boundary":
        return {"type": t, "subtype": "compact_boundary"}
    if t == "assistant":
        uses = [{"type": "tool_use", "id": b["id"], "name": b["name"], "input": b["input"]}
                for b in d["message"].get("content", []) if b.get("type") == "tool_use"]
        if uses:
            return {"type": t, "cwd": d.get("cwd"), "message": {"id": d["message"]["id"], "content": uses}}
    return None


def record(name, case):
    BODIES.clear()
    BODIES.update(case.get("bodies", {}))
    STYLES[:] = case.get("styles", [])
    scratch = tempfile.mkdtemp(prefix="cc-sess-")
    try:
        fix = os.path.join(scratch, "fix")
        for rel, text in case["files"].items():
            path = os.path.join(fix, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        os.makedirs(os.path.join(fix, "home"), exist_ok=True)
        tools, n = [], 0
        for entry in case["tools"]:
            calls = entry if isinstance(entry, list) else [entry]
            for call in calls:
                n += 1
                call["id"] = "toolu_sess_%02d" % n  # one id per call: Claude Code pairs results by id
            tools.append(entry)
        with open(os.path.join(scratch, "tools.json"), "w") as f:
            json.dump(tools, f)
        with open(os.path.join(scratch, "args"), "w") as f:
            f.write("--allowedTools\nRead Write Bash\n")
        out = os.path.join(scratch, "out")
        cmd = [os.path.join(ORACLE, "capture_cc.sh"), "-T", os.path.join(scratch, "tools.json"),
               "-X", os.path.join(scratch, "args"), "-p", case["prompts"][0]]
        for p in case["prompts"][1:]:
            cmd += ["-P", p]
        subprocess.run(cmd + [fix, out], check=True, stdout=subprocess.DEVNULL)
        stderr = open(os.path.join(out, "stderr")).read()
        assert stderr.count("rc=0") == len(case["prompts"]), stderr
        run = os.path.join(out, "run")

        def sub(s):
            return s.replace(run, ROOT)

        # Every text each rule-like file had (Claude Code sends it trimmed).
        versions = {}
        for rel, text in list(case["files"].items()) + list(case["changed"].items()):
            base = os.path.basename(rel)
            if base in ("CLAUDE.md", "CLAUDE.local.md") or "/.claude/rules/" in "/" + rel:
                body = re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.S).strip()
                if body:
                    versions.setdefault(ROOT + "/" + rel, []).append(body)
        # The /compact run's requests are summarisation requests.
        counts = [int(m) for m in re.findall(r"=== continue \d+: (\d+) requests so far", stderr)]
        total = len([f for f in os.listdir(os.path.join(out, "cap")) if re.fullmatch(r"req-\d+\.json", f)])
        bounds = counts + [total]
        summarising = set()
        for k, prompt in enumerate(case["prompts"][1:]):
            if prompt == "/compact":
                summarising.update(range(bounds[k] + 1, bounds[k + 1] + 1))
        steps = []
        for i in range(1, total + 1):
            if i in summarising:
                continue
            body = json.load(open(os.path.join(out, "cap", "req-%d.json" % i)))
            files = {}
            for message in body["messages"]:
                for s in strings(message["content"]):
                    for start, end, _, path in rule_spans(sub(s), versions):
                        files[path] = files.get(path, 0) + len(sub(s)[start:end].encode())
            steps.append({"files": [{"path": p, "bytes": b} for p, b in sorted(files.items())]})
        transcripts = [os.path.join(dp, f) for dp, _, fs in os.walk(os.path.join(out, "transcripts"))
                       for f in fs if f.endswith(".jsonl")]
        assert len(transcripts) == 1, transcripts
        kept = []
        for line in open(transcripts[0]):
            d = json.loads(sub(line))
            r = keep_record(d, versions)
            if r is not None:
                kept.append(json.dumps(r, ensure_ascii=False, separators=(",", ":")))
        dest = os.path.join(OUT, name)
        os.makedirs(dest, exist_ok=True)
        with open(os.path.join(dest, "transcript.jsonl"), "w") as f:
            f.write("\n".join(kept) + "\n")
        # The fixture as the session left it (scripted changes applied), for questions asked
        # at the session's end (`nearby --session`).
        final = dict(case["files"], **case["changed"])
        with open(os.path.join(dest, "files.json"), "w") as f:
            json.dump({ROOT + "/" + rel: text for rel, text in sorted(final.items())}, f, indent=1)
            f.write("\n")
        with open(os.path.join(dest, "expected.json"), "w") as f:
            json.dump({"recorded_from": "claude-code 2.1.332", "steps": steps}, f, indent=1)
            f.write("\n")
        print("%s: %d main-loop requests, %d summarising" % (name, len(steps), len(summarising)))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    for name in sys.argv[1:] or CASES:
        record(name, CASES[name])
