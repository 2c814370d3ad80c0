#!/usr/bin/env bash
# record-skills.sh - record the skills block (B5) of the real opencode for each case under
# tests/conformance/skills/<case>/ into its expected.txt.
#
# usage: tests/oracle/record-skills.sh [CASE...]        (default: every case)
#
# A case is laid out like the main conformance cases (README there: proj/, home/, global/,
# case.toml with [run] cwd, git, env). capture.sh -m full runs opencode once; the block is the
# system text from the last occurrence of its two opening lines (the assets skills/intro and
# skills/how-to-load, read from the binary by record-assets.py) to the end (skills come last:
# no structured output, no user.system), or "<no skills block>" when opencode sent none.
# opencode's own prose in it becomes "blake3:<hex>" of the text, so no opencode text lands in
# the repository: each line before the listing (the opening lines, and the line that stands
# for an empty listing) and the built-in skill's description.
# A case with a site/ directory gets it served on 127.0.0.1 (python3 -m http.server, a free
# port) for the run, its base URL in $SKILLS_URL (configs write "{env:SKILLS_URL}").
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CASES=$ROOT/tests/conformance/skills
. "$HERE/lib.sh"
BIN=$(oracle_bin) || { echo "record-skills.sh: installing opencode-ai@$OPENCODE_VERSION failed" >&2; exit 2; }
for v in $(compgen -e); do case $v in OPENCODE_*) unset "$v" ;; esac; done
export LC_ALL=C.UTF-8 PYTHONIOENCODING=utf-8

if [ $# -gt 0 ]; then IDS=("$@"); else
  mapfile -t IDS < <(cd "$CASES" && for d in */; do [ -f "$d/case.toml" ] && echo "${d%/}"; done | LC_ALL=C sort)
fi

for id in "${IDS[@]}"; do
  dir=$CASES/$id
  [ -f "$dir/case.toml" ] || { echo "record-skills.sh: no such case: $id" >&2; exit 1; }
  meta=$(python3 - "$dir/case.toml" <<'PY'
import shlex, sys, tomllib
c = tomllib.load(open(sys.argv[1], "rb"))
run = c.get("run", {})
print("CWD=" + shlex.quote(run.get("cwd", ".")))
print("GIT=(%s)" % " ".join(shlex.quote(g) for g in run.get("git", [])))
print("ENVS=(%s)" % " ".join(shlex.quote("%s=%s" % kv) for kv in sorted(run.get("env", {}).items())))
PY
  )
  eval "$meta"
  scr=$(mktemp -d "${TMPDIR:-/tmp}/ctxgraph-skills.XXXXXX")
  cp -a "$dir/proj" "$scr/proj"
  args=(-m full -C "$CWD")
  if [ -d "$dir/home" ]; then cp -a "$dir/home" "$scr/home"; args+=(-H "$scr/home"); fi
  if [ -d "$dir/global" ]; then cp -a "$dir/global" "$scr/global"; args+=(-g "$scr/global"); fi
  for g in "${GIT[@]}"; do git -C "$scr/proj/$g" -c init.defaultBranch=main init -q; done
  srv=
  if [ -d "$dir/site" ]; then
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    python3 -m http.server --bind 127.0.0.1 --directory "$dir/site" "$port" >/dev/null 2>&1 &
    srv=$!
    for _ in $(seq 50); do python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 0.2)" 2>/dev/null && break; sleep 0.1; done
    ENVS+=("SKILLS_URL=http://127.0.0.1:$port")
  fi
  rc=0
  env "${ENVS[@]}" "$HERE/capture.sh" "${args[@]}" "$scr/proj" >"$scr/full.out" 2>"$scr/err" || rc=$?
  [ -z "$srv" ] || { kill "$srv"; wait "$srv" 2>/dev/null || true; }
  [ "$rc" = 0 ] || { cat "$scr/err" >&2; rm -rf "$scr"; exit 1; }
  if grep -q 'opencode run failed' "$scr/err"; then cat "$scr/err" >&2; rm -rf "$scr"; exit 1; fi
  python3 - "$scr/full.out" "$dir/expected.txt" "$HERE" "$BIN" <<'PY'
import importlib.util, os, re, sys, blake3
spec = importlib.util.spec_from_file_location("record_assets", os.path.join(sys.argv[3], "record-assets.py"))
record_assets = importlib.util.module_from_spec(spec)
spec.loader.exec_module(record_assets)
texts = {name: text for name, (text, _) in record_assets.find_assets(open(sys.argv[4], "rb").read()).items()}
system = open(sys.argv[1], encoding="utf-8").read()
start = system.rfind(texts["skills/intro"] + "\n" + texts["skills/how-to-load"] + "\n")
block = system[start:] if start >= 0 else "<no skills block>"
def hashed(text):
    return "blake3:" + blake3.blake3(text.encode()).hexdigest()
if start >= 0:
    lines = block.split("\n")
    listing = lines.index("<available_skills>") if "<available_skills>" in lines else len(lines)
    block = "\n".join([hashed(line) for line in lines[:listing]] + lines[listing:])
block = re.sub(r"(<name>customize-opencode</name>\n    <description>)(.*?)(</description>\n    <location>&lt;built-in&gt;</location>)",
               lambda m: m.group(1) + hashed(m.group(2)) + m.group(3), block, flags=re.S)
open(sys.argv[2], "w", encoding="utf-8").write(block + "\n")
PY
  rm -rf "$scr"
  echo "== $id: $(wc -c <"$dir/expected.txt") bytes"
done
