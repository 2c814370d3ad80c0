#!/usr/bin/env bash
# record-agents.sh - record the expected outputs of tests/agents/<agent>/<ID>/ from the REAL
# agent CLIs (the oracle in ../shared/oracle/agents: Codex 0.171.0 and Gemini CLI 0.61.0 run
# offline against a fake model on 127.0.0.1). Expected outputs never come from anywhere else.
#
# usage: tests/oracle/record-agents.sh [codex/ID...]    (no argument: every case)
#   AGENTS_ORACLE   the oracle directory (default: ../shared/oracle/agents beside the repo,
#                   else /work/shared/oracle/agents)
#
# Per case: capture_codex.sh -C <run.cwd> [-c <run.config>]... <case> <scratch>, then keep
# only what the test compares: the text of the `# AGENTS.md instructions…` user message
# (empty when Codex sent none), with the scratch run directory written as `<run>`, in
# <case>/oracle.out. The fixture's rule files are ours; Codex's own prompts are not kept.
#
# Gemini: capture_gemini.sh -C <run.cwd> [-R <run.read>] <case> <scratch>, then keep three
# texts (each empty when Gemini sent none), with the run directory written as `<run>`:
# oracle.system, the system instruction from its last `<loaded_context>` to its end (Gemini's
# prose before it is not kept); oracle.user, the first user message's `<loaded_context>` up to
# `</session_context>`; oracle.read (with run.read only), what the read_file result carries
# after the file's own text.
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

for id in "${IDS[@]}"; do
  agent=${id%%/*}
  case $agent in
    codex) record_codex "$CASES/$id" "$SCRATCH/${id//\//_}" ;;
    gemini) record_gemini "$CASES/$id" "$SCRATCH/${id//\//_}" ;;
    *) echo "record-agents.sh: no recorder for $agent yet" >&2; exit 1 ;;
  esac
  echo "recorded $id"
done
