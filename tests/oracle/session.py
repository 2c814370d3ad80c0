#!/usr/bin/env python3
"""The scenario side of record-session.sh: what a session scenario asks for, and the fixture
tests/session/NAME/ made from what opencode did.

    session.py project SCENARIO DIR        lay out the fixture project in DIR
    session.py config SCENARIO PORT        print OPENCODE_CONFIG_CONTENT (fake provider on PORT)
    session.py prompts SCENARIO            print the prompts, one per line
    session.py fixture SCENARIO RUN DEST   write DEST/ from RUN/ (proj/, export.json, cap/)

A scenario (session-scenarios/*.json, described in its README) holds `note`, `limit`,
`compaction`, optional `files`, `prompts` and the fake model's `replies`.

The fixture keeps what tests/session.rs compares and nothing that changes between runs:

  case.json            note, limit, compaction and files of the scenario, and `proj`, the raw
                       fixture path (tool outputs are cut at 2000 UTF-16 units, so its length
                       matters)
  export.json          `opencode export`, normalised (below)
  compaction-N.txt     the text between `<conversation>` and `</conversation>` of the Nth
                       request to the compaction agent
  prior-summary-N.txt  the summary that request anchors to (`<prior-summary>`), if any
  next-N.json          the `messages` after the system message of the first main request
                       after the Nth compaction request

Normalisation: session/message/part ids become ses_0001, msg_0001, prt_0001, ... numbered
in the sorted order of the raw ids (which is their creation order), over the export and every
request alike; numeric times become "<T>"; snapshot, patch hash and slug become "<SNAPSHOT>",
"<HASH>", "<SLUG>"; the fixture path becomes "<PROJ>", the scratch run dir "<RUN>", the date
line of the system prompt "<DATE>". opencode's own prompt texts (the synthetic "continue"
message it writes after an automatic compaction) become `blake3:<hex>` of the text. System
messages and the summary instructions are not kept at all. Files are written as UTF-8 JSON
with one-space indent and no final newline; lone surrogates (a 2000-unit cut through an astral
character) are kept as they are.
"""
import glob
import json
import os
import re
import shutil
import sys

import blake3

ID = re.compile(r"\b(ses|msg|prt)_[0-9A-Za-z]{20,}\b")
CONVERSATION = re.compile(r"<conversation>\n(.*?)\n</conversation>", re.S)
PRIOR_SUMMARY = re.compile(r"<prior-summary>\n(.*?)\n</prior-summary>", re.S)
PLACEHOLDER_KEYS = {"snapshot": "<SNAPSHOT>", "hash": "<HASH>", "slug": "<SLUG>"}


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def write(path, text):
    with open(path, "w", encoding="utf-8", errors="surrogatepass") as f:
        f.write(text)


def write_json(path, value):
    write(path, json.dumps(value, indent=1, ensure_ascii=False))


# ---- what the scenario asks for

def project(scenario, root):
    """A git repo (no commit) with the scenario's files and the standard sized files."""
    os.makedirs(root, exist_ok=True)
    for rel, text in scenario.get("files", {}).items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        write(path, text)

    def lines(name, count, char):  # `count` lines of 99 `char`s and a newline
        write(os.path.join(root, name), (char * 99 + "\n") * count)

    lines("big.txt", 100, "x")  # 10 000 chars
    lines("huge.txt", 400, "h")  # 40 000 chars
    for i in range(1, 7):  # 48 000 chars each: under the read tool's 50 KB cap
        lines(f"p{i}.txt", 480, str(i))
    # 2-byte and astral characters: UTF-16 length differs from the code point count
    write(os.path.join(root, "uni.txt"), ("\u00e9" * 30 + "\U0001F600" * 30 + "\n") * 100)


def config(scenario, port):
    """The provider (the fake model on 127.0.0.1:PORT), the model limit, the compaction block."""
    model = "fake-model"
    cfg = {
        "provider": {"fake": {
            "npm": "@ai-sdk/openai-compatible", "name": "Fake",
            "options": {"baseURL": f"http://127.0.0.1:{port}/v1", "apiKey": "x"},
            "models": {model: {"name": model, "limit": scenario["limit"]}}}},
        "model": f"fake/{model}", "small_model": f"fake/{model}",
        "autoupdate": False, "share": "disabled",
    }
    if scenario.get("compaction"):
        cfg["compaction"] = scenario["compaction"]
    return json.dumps(cfg)


# ---- what opencode did, normalised

class Normaliser:
    def __init__(self, proj, run, raw_texts):
        self.proj, self.run = proj, run
        self.ids = {}
        for prefix in ("ses", "msg", "prt"):
            found = sorted({m.group(0) for text in raw_texts for m in ID.finditer(text) if m.group(1) == prefix})
            self.ids.update({raw: "%s_%04d" % (prefix, i) for i, raw in enumerate(found, 1)})

    def text(self, s):
        s = ID.sub(lambda m: self.ids.get(m.group(0), m.group(0)), s)
        s = s.replace(self.proj, "<PROJ>").replace(os.path.join(self.run, "proj"), "<PROJ>")
        s = s.replace(self.run, "<RUN>")
        return re.sub(r"(Today's date: )[^\n]*", r"\1<DATE>", s)

    def value(self, v, key=None):
        if isinstance(v, str):
            return PLACEHOLDER_KEYS.get(key) or self.text(v)
        if isinstance(v, list):
            return [self.value(x) for x in v]
        if isinstance(v, dict):
            return {k: self.times(x) if k == "time" and isinstance(x, dict) else self.value(x, k)
                    for k, x in v.items()}
        return v

    def times(self, time):
        return {k: "<T>" if isinstance(x, (int, float)) and not isinstance(x, bool) else self.value(x, k)
                for k, x in time.items()}


def opencode_texts(export):
    """opencode's own prompt texts in the export: the synthetic parts it writes itself."""
    return {part["text"] for message in export["messages"] for part in message["parts"]
            if part.get("type") == "text" and part.get("synthetic")
            and (part.get("metadata") or {}).get("compaction_continue")}


def hash_texts(value, texts):
    if isinstance(value, str):
        return "blake3:" + blake3.blake3(value.encode()).hexdigest() if value in texts else value
    if isinstance(value, list):
        return [hash_texts(v, texts) for v in value]
    if isinstance(value, dict):
        return {k: hash_texts(v, texts) for k, v in value.items()}
    return value


def last_user_text(request):
    content = [m for m in request["messages"] if m["role"] == "user"][-1]["content"]
    return content if isinstance(content, str) else "".join(c.get("text", "") for c in content)


def fixture(scenario, run, dest):
    proj = os.path.realpath(os.path.join(run, "proj"))
    export_raw = open(os.path.join(run, "export.json"), encoding="utf-8").read()
    kinds = {}
    with open(os.path.join(run, "cap", "log.jsonl")) as f:
        for line in f:
            entry = json.loads(line)
            kinds[entry["n"]] = entry["kind"]
    requests = {}
    for path in glob.glob(os.path.join(run, "cap", "req-*.json")):
        with open(path, encoding="utf-8", errors="surrogatepass") as f:
            raw = f.read()
        requests[int(re.search(r"req-(\d+)\.json$", path).group(1))] = raw
    norm = Normaliser(proj, run, [export_raw, *requests.values()])
    requests = {n: norm.value(json.loads(raw)) for n, raw in requests.items()}
    export = norm.value(json.loads(export_raw))
    texts = opencode_texts(export)

    # built in the run dir and copied over DEST at the end: a failure leaves the old fixture
    # whole (and nothing half-made in tests/session/, where every dir is a test case)
    final, dest = dest, os.path.join(run, "fixture")
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(dest)
    write_json(os.path.join(dest, "case.json"), {
        "note": scenario.get("note", ""),
        "proj": proj,
        "limit": scenario["limit"],
        "compaction": scenario.get("compaction", {}),
        "files": scenario.get("files", {}),
    })
    write_json(os.path.join(dest, "export.json"), hash_texts(export, texts))
    order = sorted(requests)
    compactions = [n for n in order if kinds.get(n) == "compaction"]
    for i, n in enumerate(compactions, 1):
        user = last_user_text(requests[n])
        conversation = CONVERSATION.search(user)
        if not conversation:
            sys.exit(f"session.py: compaction request {n} has no <conversation> block")
        write(os.path.join(dest, f"compaction-{i}.txt"), conversation.group(1))
        prior = PRIOR_SUMMARY.search(user)
        if prior:
            write(os.path.join(dest, f"prior-summary-{i}.txt"), prior.group(1))
        following = next((m for m in order if m > n and kinds.get(m) == "main"), None)
        if following is not None:
            messages = [m for m in requests[following]["messages"] if m["role"] != "system"]
            write_json(os.path.join(dest, f"next-{i}.json"), hash_texts(messages, texts))
    shutil.rmtree(final, ignore_errors=True)
    shutil.copytree(dest, final)


def main():
    command, args = sys.argv[1], sys.argv[2:]
    scenario = load(args[0])
    if command == "project":
        project(scenario, args[1])
    elif command == "config":
        print(config(scenario, args[1]))
    elif command == "prompts":
        print("\n".join(scenario["prompts"]))
    elif command == "fixture":
        fixture(scenario, args[1], args[2])
    else:
        sys.exit(f"session.py: unknown command {command}")


if __name__ == "__main__":
    main()
