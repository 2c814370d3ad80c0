#!/usr/bin/env python3
"""Record tests/agents/codex/sessions/<case>/ from the REAL Codex CLI 0.171.0.

Each case is a fixture (proj/ and home/), a scripted fake model (per tool-offering request,
in order: a call, a list of calls, or null for a text answer), a prompt and `codex exec
resume` follow-ups. capture_codex.sh (../shared/oracle/agents) runs Codex offline and keeps
every request body (cap/req-N.json) and the rollout
(~/.codex/sessions/YYYY/MM/DD/rollout-….jsonl). Kept per case:

- proj/, home/: the project and home as they are at the end of the session (the fixture with
  the session's scripted changes applied), which `session rules` reads for the files' texts.
- rollout.jsonl: the rollout's `response_item` records only (all `session rules` reads), the
  run directory written as `<run>`, and every text of Codex's own replaced by a
  `<prose:blake3=HASH>` token: the skills introduction, the sentence opening a replacement
  AGENTS.md message, the base/permissions/environment items, tool outputs' wording.
- expected.json: per request, the bytes of every rule-like file present in it, computed HERE
  from the captured request bodies (not from the rollout, not by ctxgraph): each skill line
  of a `<skills_instructions>` item (its file from the roots table), each known text of each
  AGENTS.md (the fixture's, and the text after a scripted change) found in an AGENTS.md
  item, and each `<skill>` item whole; bytes with the run folder written `<run>`, and how
  often the text names it (`run_mentions`), so a test laid out elsewhere can adjust.

usage: tests/oracle/codex_sessions.py [CASE...]   (AGENTS_ORACLE: the oracle directory)
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from blake3 import blake3

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
ORACLE = os.environ.get("AGENTS_ORACLE") or next(
    p for p in (os.path.join(REPO, "..", "shared", "oracle", "agents"), "/work/shared/oracle/agents")
    if os.path.isdir(p))
OUT = os.path.join(REPO, "tests", "agents", "codex", "sessions")

ROOT = "CXS-S-ROOT: root rules.\n"
ADDED = "CXS-S-ADDED: added in the session.\n"
SKILLS = {
    "proj/.agents/skills/deploy/SKILL.md": "---\nname: deploy\ndescription: CXS-S-DEPLOY ships the app\n---\n# Deploy\nCXS-S-DEPLOY-BODY run make deploy.\n",
    "proj/.codex/skills/lint/SKILL.md": "---\nname: lint\ndescription: CXS-S-LINT lints\n---\nbody\n",
    "home/.codex/config.toml": "[skills]\nbundled.enabled = false\n",
}
CASES = {
    # The model appends to AGENTS.md mid-turn (nothing new is sent that turn); the resumed
    # turn sends a replacing AGENTS.md message, and `$deploy` in its prompt a <skill> message.
    "changed-then-mention": {
        "files": dict(SKILLS, **{"proj/AGENTS.md": ROOT, "proj/sub/AGENTS.md": "CXS-S-SUB: sub rules.\n"}),
        "end": {"proj/AGENTS.md": ROOT + ADDED},
        "texts": {"proj/AGENTS.md": [ROOT, ROOT + ADDED], "proj/sub/AGENTS.md": ["CXS-S-SUB: sub rules.\n"]},
        "tools": [{"name": "exec_command", "input": {"cmd": "printf '%s' '" + ADDED.rstrip("\n") + "\n' >> AGENTS.md"}}, None],
        "args": ["-S", "workspace-write", "-p", "start", "-P", "now use $deploy"],
    },
    # Resumed from sub/: the AGENTS.md message for sub/'s chain (two files, one message).
    "resumed-in-sub": {
        "files": dict(SKILLS, **{"proj/AGENTS.md": ROOT, "proj/sub/AGENTS.md": "CXS-S-SUB: sub rules.\n"}),
        "end": {},
        "texts": {"proj/AGENTS.md": [ROOT], "proj/sub/AGENTS.md": ["CXS-S-SUB: sub rules.\n"]},
        "tools": [{"name": "exec_command", "input": {"cmd": "cat AGENTS.md"}}, None],
        "args": ["-p", "start", "-P", "go on", "-D", "sub"],
    },
}


def token(text):
    return "<prose:blake3=%s>" % blake3(text.encode()).hexdigest()


def scrub_text(text, agents_seen):
    """A content item's text with Codex's own words as tokens; ours (files, prompts) kept."""
    if text.startswith("<skills_instructions>"):
        lines = text.split("\n")
        lines[2] = token(lines[2])
        return "\n".join(lines)
    if text.startswith("# AGENTS.md instructions"):
        if agents_seen:
            open_tag = "<INSTRUCTIONS>\n"
            head, body = text.split(open_tag, 1)
            sentence, rest = body.split("\n\n", 1)
            return head + open_tag + token(sentence) + "\n\n" + rest
        return text
    if text.startswith("<skill>\n"):
        return text
    if text.startswith("<") or len(text) > 400:
        return token(text)
    return text  # a prompt of the case's


def scrub(rollout, run):
    kept = []
    agents_seen = False
    for line in open(rollout, encoding="utf-8"):
        record = json.loads(line)
        if record.get("type") != "response_item":
            continue
        payload = record["payload"]
        if payload.get("type") == "message":
            for c in payload.get("content", []):
                if "text" in c:
                    t = c["text"]
                    c["text"] = scrub_text(t, agents_seen)
                    agents_seen = agents_seen or t.startswith("# AGENTS.md instructions")
        elif payload.get("type", "").endswith("_output") and isinstance(payload.get("output"), str):
            payload["output"] = token(payload["output"])
        payload.pop("encrypted_content", None)
        kept.append(json.dumps({"type": "response_item", "payload": payload}, ensure_ascii=False))
    return ("\n".join(kept) + "\n").replace(run, "<run>")


def expected(cap, run, case):
    reqs = sorted(glob.glob(cap + "/req-*.json"), key=lambda f: int(f.rsplit("-", 1)[1].split(".")[0]))
    steps = []
    for req in reqs:
        body = json.load(open(req, encoding="utf-8"))
        files = {}

        def add(path, text, times=1):
            # Bytes with the run folder written `<run>`, and how often it is named: the test
            # lays the case out elsewhere, where a path has another length.
            counted = text.replace(run, "<run>")
            entry = files.setdefault(path, [0, 0])
            entry[0] += len(counted.encode()) * times
            entry[1] += counted.count("<run>") * times

        for item in body.get("input", []):
            if item.get("type") != "message":
                continue
            for c in item.get("content", []):
                t = c.get("text", "")
                if t.startswith("<skills_instructions>"):
                    roots = dict(re.findall(r"^- `(r\d+)` = `(.*)`$", t, re.M))
                    for line in t.split("\n"):
                        m = re.match(r"^- .*\(file: (r\d+)/(.*)\)$", line)
                        if m and m.group(1) in roots:
                            add(roots[m.group(1)] + "/" + m.group(2), line)
                elif t.startswith("# AGENTS.md instructions"):
                    for rel, versions in case["texts"].items():
                        # The longest known text of the file that the item holds.
                        for v in sorted(versions, key=len, reverse=True):
                            if v in t:
                                add(run + "/" + rel, v, t.count(v))
                                break
                elif t.startswith("<skill>\n"):
                    path = re.search(r"^<path>(.*)</path>$", t, re.M).group(1)
                    add(path, t)
        steps.append({"files": [{"path": p.replace(run, "<run>"), "bytes": b, "run_mentions": m}
                                for p, (b, m) in sorted(files.items())]})
    return {"steps": steps}


def record(name, case):
    scratch = tempfile.mkdtemp(prefix="cx-sessions.")
    try:
        fixture = os.path.join(scratch, "fixture")
        for rel, text in case["files"].items():
            path = os.path.join(fixture, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            open(path, "w", encoding="utf-8").write(text)
        os.makedirs(os.path.join(fixture, "home"), exist_ok=True)
        tools = os.path.join(scratch, "tools.json")
        json.dump(case["tools"], open(tools, "w"))
        out = os.path.join(scratch, "out")
        log = subprocess.run(["bash", os.path.join(ORACLE, "capture_codex.sh"), "-T", tools] + case["args"] + [fixture, out],
                             capture_output=True, text=True)
        if "rc=0" not in (log.stdout + log.stderr):
            sys.exit("codex failed on %s:\n%s%s" % (name, log.stdout[-2000:], log.stderr[-2000:]))
        run = os.path.join(out, "run")
        rollouts = glob.glob(run + "/home/.codex/sessions/*/*/*/rollout-*.jsonl")
        if len(rollouts) != 1:
            sys.exit("%s: %d rollouts" % (name, len(rollouts)))
        dest = os.path.join(OUT, name)
        shutil.rmtree(dest, ignore_errors=True)
        os.makedirs(dest)
        for rel, text in dict(case["files"], **case["end"]).items():
            path = os.path.join(dest, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            open(path, "w", encoding="utf-8").write(text)
            # home/.codex/config.toml is merged into the script's own config; proj/ is as left.
            if rel.startswith("proj/") and open(os.path.join(run, rel), encoding="utf-8").read() != text:
                sys.exit("%s: %s at the end differs from the case's `end`" % (name, rel))
        open(os.path.join(dest, "rollout.jsonl"), "w", encoding="utf-8").write(scrub(rollouts[0], run))
        json.dump(expected(os.path.join(out, "cap"), run, case), open(os.path.join(dest, "expected.json"), "w"), indent=1)
        print("recorded codex sessions/%s" % name)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    for name in sys.argv[1:] or sorted(CASES):
        record(name, CASES[name])
