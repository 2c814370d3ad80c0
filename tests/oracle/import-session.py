#!/usr/bin/env python3
"""Turn sessions recorded by ../shared/oracle/session/record.sh into fixtures for
tests/session.rs, keeping only what the tests compare.

usage: import-session.py CASES_DIR SCENARIOS_DIR NAME...   (writes tests/session/NAME/)

Per case:
  case.json        the scenario (note, limit, compaction, files) and the raw fixture path
                   (`proj`: tool outputs are cut at 2000 UTF-16 units, so its length matters)
  export.json      `opencode export` (already normalised by the recorder: <PROJ>, <T>, ids)
  compaction-N.txt the text between `<conversation>\\n` and `\\n</conversation>` of the Nth
                   request to the compaction agent
  prior-summary-N.txt  the summary that request anchors to (`<prior-summary>`), if any
  next-N.json      the `messages` after the system message of the first normal request
                   after the Nth compaction

opencode's own prompt texts (the synthetic "continue" message) are replaced by
`blake3:<hex>` of the text, in the export and in the expected messages alike. The system
messages and the summary instructions are not kept at all.
"""
import json
import os
import re
import sys

import blake3

HERE = os.path.dirname(os.path.abspath(__file__))
DEST = os.path.join(HERE, "..", "session")


def hashed(text):
    return "blake3:" + blake3.blake3(text.encode()).hexdigest()


def prompt_texts(export):
    """opencode's prompt texts found in the export: synthetic text parts it wrote itself."""
    texts = set()
    for message in export["messages"]:
        for part in message["parts"]:
            metadata = part.get("metadata") or {}
            if part.get("type") == "text" and part.get("synthetic") and metadata.get("compaction_continue"):
                texts.add(part["text"])
    return texts


def replace_texts(value, texts):
    if isinstance(value, str):
        return hashed(value) if value in texts else value
    if isinstance(value, list):
        return [replace_texts(v, texts) for v in value]
    if isinstance(value, dict):
        return {k: replace_texts(v, texts) for k, v in value.items()}
    return value


def numbered(case_dir, stem):
    """stem.json (one request), or stem-1.json, stem-2.json, ... in order."""
    out = []
    if os.path.exists(os.path.join(case_dir, stem + ".json")):
        out.append(os.path.join(case_dir, stem + ".json"))
    n = 1
    while os.path.exists(os.path.join(case_dir, f"{stem}-{n}.json")):
        out.append(os.path.join(case_dir, f"{stem}-{n}.json"))
        n += 1
    return out


def main():
    cases, scenarios, names = sys.argv[1], sys.argv[2], sys.argv[3:]
    for name in names:
        src = os.path.join(cases, name)
        dest = os.path.join(DEST, name)
        os.makedirs(dest, exist_ok=True)
        scenario = json.load(open(os.path.join(scenarios, name + ".json")))
        meta = json.load(open(os.path.join(src, "meta.json")))
        export = json.load(open(os.path.join(src, "export.json")))
        texts = prompt_texts(export)
        case = {
            "note": scenario.get("note", ""),
            "proj": meta["proj"],
            "limit": scenario["limit"],
            "compaction": scenario.get("compaction", {}),
            "files": scenario.get("files", {}),
        }
        json.dump(case, open(os.path.join(dest, "case.json"), "w"), indent=1, ensure_ascii=False)
        json.dump(replace_texts(export, texts), open(os.path.join(dest, "export.json"), "w"), indent=1, ensure_ascii=False)
        for n, path in enumerate(numbered(src, "compaction-request"), 1):
            request = json.load(open(path))
            user = [m for m in request["messages"] if m["role"] == "user"][-1]["content"]
            match = re.search(r"<conversation>\n(.*?)\n</conversation>", user, re.S)
            with open(os.path.join(dest, f"compaction-{n}.txt"), "w", encoding="utf-8", errors="surrogatepass") as f:
                f.write(match.group(1))
            prior = re.search(r"<prior-summary>\n(.*?)\n</prior-summary>", user, re.S)
            if prior:
                with open(os.path.join(dest, f"prior-summary-{n}.txt"), "w", encoding="utf-8") as f:
                    f.write(prior.group(1))
        for n, path in enumerate(numbered(src, "next-request"), 1):
            request = json.load(open(path))
            messages = [m for m in request["messages"] if m["role"] != "system"]
            with open(os.path.join(dest, f"next-{n}.json"), "w", encoding="utf-8", errors="surrogatepass") as f:
                json.dump(replace_texts(messages, texts), f, indent=1, ensure_ascii=False)
        print(f"{name} -> {dest}")


if __name__ == "__main__":
    main()
