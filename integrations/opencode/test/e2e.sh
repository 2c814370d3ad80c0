#!/usr/bin/env bash
# e2e.sh - the opencode plugin end to end: the real opencode (opencode-ai 1.18.33, installed
# into $ORACLE_CACHE by tests/oracle/lib.sh) runs multi-step sessions against the scripted
# fake model of tests/oracle/fake_model.py on 127.0.0.1, with integrations/opencode/ctxgraph.ts
# loaded from the project's .opencode/plugin/. The project has local rules, an `instructions`
# glob, a remote rule (served by the fake model from the project's www/) and a reference, so
# opencode's text holds its references block between the environment and the rules and its
# skills block after them; one rule's text holds lines like the ones that open the MCP and
# skills blocks.
#
# compare (the default mode): the model reads a file (which attaches a nested rule), reads the
# root AGENTS.md, edits it, and answers: four model steps, the last two after the edit. Passes
# when the plugin wrote one drift line per step, every one `"equal": true`, and the step after
# the edit really carried the edited rule.
#
# serve: the model reads the remote rule's file and edits it, so from then on opencode fetches
# the new text while ctxgraph's server keeps its cached copy; three steps. Passes when the
# first two steps are equal (so the first request is opencode's own text, untouched), the third
# differs in the remote rule only, and the third request is the first one byte for byte:
# ctxgraph's copy of the rule in place of opencode's, and everything around it (references,
# skills) as opencode built it.
#
# Self-contained: everything but node, npm, python3 and git comes from this repository or is
# installed by npm into $ORACLE_CACHE on the first run. opencode installs @opencode-ai/plugin
# into every config directory it loads (here the project's .opencode/ and the isolated global
# config dir) unless that directory already has it; the test installs it once into the cache
# and copies it there first, so opencode never reaches the registry during the run.
#
# usage: integrations/opencode/test/e2e.sh
#   CTXGRAPH_BIN   the ctxgraph binary (default: built here with cargo)
#   ORACLE_CACHE   where opencode and the plugin dependency are installed (default /tmp/oracle)
# Skips (exit 0, with the reason) when node or npm is missing.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
# shellcheck source=../../../tests/oracle/lib.sh
. "$ROOT/tests/oracle/lib.sh"
FAKE=$ROOT/tests/oracle/fake_model.py

die() { echo "e2e: $*" >&2; exit 1; }
for tool in node npm; do
  command -v "$tool" >/dev/null || { echo "e2e: skipped: $tool is not installed"; exit 0; }
done
for tool in git python3; do
  command -v "$tool" >/dev/null || die "$tool is needed"
done

if [ -z "${CTXGRAPH_BIN:-}" ]; then
  (cd "$ROOT" && cargo build --quiet -p ctxgraph-cli) || die "cargo build failed"
  CTXGRAPH_BIN=${CARGO_TARGET_DIR:-$ROOT/target}/debug/ctxgraph
fi
[ -x "$CTXGRAPH_BIN" ] || die "no ctxgraph binary at $CTXGRAPH_BIN"

BIN=$(oracle_bin) || die "installing opencode-ai@$OPENCODE_VERSION failed"
[ "$("$BIN" --version)" = "$OPENCODE_VERSION" ] || die "opencode is not $OPENCODE_VERSION"

# The dependency opencode wants in each config directory, installed once into the cache.
DEPS=$ORACLE_CACHE/plugin-deps-$OPENCODE_VERSION
if [ ! -d "$DEPS/node_modules/@opencode-ai/plugin" ]; then
  mkdir -p "$DEPS"
  printf '{"name":"ctxgraph-e2e-plugin-deps","private":true}\n' >"$DEPS/package.json"
  (cd "$DEPS" && npm install --no-audit --no-fund "@opencode-ai/plugin@$OPENCODE_VERSION" >&2) ||
    die "npm install @opencode-ai/plugin failed"
fi
preinstall() {
  mkdir -p "$1"
  cp -R "$DEPS/node_modules" "$DEPS/package.json" "$DEPS/package-lock.json" "$1/"
}

RUN=$(mktemp -d "${TMPDIR:-/tmp}/ctxgraph-e2e.XXXXXX")
SRV=
cleanup() {
  [ -n "$SRV" ] && { kill "$SRV" 2>/dev/null || true; wait "$SRV" 2>/dev/null || true; }
  [ -n "${KEEP:-}" ] || rm -rf "$RUN"
}
trap cleanup EXIT

# A line of a rule file may look like the first lines of the blocks opencode puts after the
# rules: the MCP block's tag and the skills block's two sentences (opencode's own texts, asked
# of ctxgraph's server, which loads them from this opencode). The style guide holds them.
LOOKALIKE=$(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"installation","params":{"texts":["skills/intro","skills/how-to-load"]}}' |
  CTXGRAPH_OPENCODE=$BIN "$CTXGRAPH_BIN" serve --stdio --no-watch |
  python3 -c 'import json, sys; t = json.load(sys.stdin)["result"]["texts"]; print("<mcp_instructions>\n" + t["skills/intro"] + "\n" + t["skills/how-to-load"])') ||
  die "ctxgraph could not load opencode's texts from $BIN"

# session NAME MODE STEPS_PY: one opencode session in $RUN/NAME (its own home, XDG dirs,
# project and fake model), the plugin in MODE, the model's steps printed as JSON by the Python
# expression STEPS_PY (`proj` is the project's path). Sets DIR and PROJ.
session() {
  local name=$1 mode=$2 steps=$3 port
  DIR=$RUN/$name
  mkdir -p "$DIR"/{home,config/opencode,data,cache,state,managed,cap,proj}
  # The project: a git repository with rules at the root, in a subdirectory, through an
  # `instructions` glob and a URL, a reference with a description, and the plugin where
  # opencode discovers plugins.
  PROJ=$(cd "$DIR/proj" && pwd -P)
  git -C "$PROJ" -c init.defaultBranch=main init -q
  printf 'root rules\n' > "$PROJ/AGENTS.md"
  mkdir -p "$PROJ/sub" "$PROJ/docs" "$PROJ/www" "$PROJ/.opencode/plugin"
  printf 'sub rules\n' > "$PROJ/sub/AGENTS.md"
  printf 'a\n' > "$PROJ/sub/a.txt"
  printf 'style guide\n%s\n' "$LOOKALIKE" > "$PROJ/docs/style.md"
  printf 'remote rules\n' > "$PROJ/www/remote.md"
  cp "$HERE/../ctxgraph.ts" "$PROJ/.opencode/plugin/ctxgraph.ts"
  preinstall "$PROJ/.opencode"
  preinstall "$DIR/config/opencode"
  python3 -c "import json, sys; proj = sys.argv[1]; call = lambda name, **arguments: {'tool_call': {'name': name, 'arguments': arguments}}; print(json.dumps($steps))" \
    "$PROJ" >"$DIR/steps.json"
  python3 "$FAKE" "$DIR/cap" --steps "$DIR/steps.json" --files "$PROJ/www" --max-requests 12 --timeout 900 &
  SRV=$!
  for _ in $(seq 100); do [ -f "$DIR/cap/port" ] && break; sleep 0.1; done
  [ -f "$DIR/cap/port" ] || die "the fake model did not start"
  port=$(cat "$DIR/cap/port")
  printf '{ "instructions": ["docs/*.md", "http://127.0.0.1:%s/files/remote.md"],\n  "references": { "docs": { "path": "./docs", "description": "the style guides" } } }\n' \
    "$port" > "$PROJ/opencode.json"

  isolation_env "$DIR"
  local config='{"provider":{"fake":{"npm":"@ai-sdk/openai-compatible","name":"Fake",
    "options":{"baseURL":"http://127.0.0.1:'"$port"'/v1","apiKey":"x"},
    "models":{"fake-model":{"name":"fake-model","limit":{"context":200000,"output":4000}}}}},
    "model":"fake/fake-model","small_model":"fake/fake-model","autoupdate":false,"share":"disabled"}'
  # No registry during the run: npm's registry is a closed port on 127.0.0.1 (nothing listens
  # on port 9), so an install opencode attempted would fail, and log so, rather than download.
  # The server keeps a remote rule for the whole session (opencode fetches it every step).
  (cd "$PROJ" && env "${ISOLATION[@]}" OPENCODE_CONFIG_CONTENT="$config" CTXGRAPH_BIN="$CTXGRAPH_BIN" \
    CTXGRAPH_OPENCODE_MODE="$mode" CTXGRAPH_SERVE_ARGS="--no-watch --remote-refresh-secs 3600" \
    npm_config_registry=http://127.0.0.1:9/ \
    timeout 840 "$BIN" run -m fake/fake-model read and edit </dev/null >"$DIR/run.out" 2>"$DIR/run.err") ||
    { tail -20 "$DIR/run.err" >&2; die "opencode run ($name) failed"; }
  kill "$SRV" 2>/dev/null || true
  wait "$SRV" 2>/dev/null || true
  SRV=
  ! grep -rs "dependency install failed" "$DIR/data/opencode/log" >&2 ||
    die "opencode tried to install its plugin dependency: the pre-install was not taken"
}

# The drift lines and the model steps (requests offering tools) of the session in $1, as
# Python values `lines` and `mains`, with `system(body)` the request's system text.
READ_SESSION='
import glob, json, os, sys
run, proj = sys.argv[1], sys.argv[2]
drift_file = os.path.join(run, "state", "ctxgraph", "opencode-drift.jsonl")
if not os.path.exists(drift_file):
    sys.exit("the plugin wrote no drift file (see run.err)")
lines = [json.loads(line) for line in open(drift_file)]
mains = []
for path in sorted(glob.glob(os.path.join(run, "cap", "req-*.json")), key=lambda p: int(p.rsplit("-", 1)[1][:-5])):
    body = json.load(open(path))
    if body.get("tools"):
        mains.append(body)
if any(line["cwd"] != proj for line in lines):
    sys.exit(f"drift lines for another directory: {lines}")
system = lambda body: "\n".join(m["content"] for m in body["messages"] if m["role"] == "system")
'

session compare compare '[
  call("read", filePath=f"{proj}/sub/a.txt"),
  call("read", filePath=f"{proj}/AGENTS.md"),
  call("edit", filePath=f"{proj}/AGENTS.md", oldString="root rules", newString="root rules, edited by the model"),
  {"text": "done"},
]'
python3 -c "$READ_SESSION"'
print(f"e2e compare: {len(mains)} model steps, {len(lines)} drift lines")
if len(mains) != 4:
    sys.exit(f"expected 4 model steps, the fake model saw {len(mains)}")
if len(lines) != len(mains):
    sys.exit(f"expected one drift line per step: {lines}")
bad = [line for line in lines if not line["equal"] or line["blocks"]]
if bad:
    sys.exit(f"drift: {bad}")
if "<available_references>" not in system(mains[0]) or "remote rules" not in system(mains[0]):
    sys.exit("the steps carried no references block or no remote rule: the boundary was not tested")
if "root rules, edited by the model" not in system(mains[3]):
    sys.exit("the last step did not carry the edited rule: the session did not test an edit")
if "root rules, edited by the model" in system(mains[1]):
    sys.exit("the rule was edited too early")
print("e2e compare: ok, zero drift")
' "$DIR" "$PROJ" || { KEEP=1; die "kept $RUN for inspection"; }

session serve serve '[
  call("read", filePath=f"{proj}/www/remote.md"),
  call("edit", filePath=f"{proj}/www/remote.md", oldString="remote rules", newString="remote rules, changed upstream"),
  {"text": "done"},
]'
python3 -c "$READ_SESSION"'
print(f"e2e serve: {len(mains)} model steps, {len(lines)} drift lines")
if len(mains) != 3 or len(lines) != 3:
    sys.exit(f"expected 3 model steps and 3 drift lines: {len(mains)} steps, {lines}")
url = next(l for l in system(mains[0]).splitlines() if l.startswith("Instructions from: http"))[len("Instructions from: "):]
expected = [{"cwd": proj, "equal": True, "blocks": []}] * 2 + [{"cwd": proj, "equal": False, "blocks": ["url:" + url]}]
if lines != expected:
    sys.exit(f"expected drift in the remote rule at the last step only: {lines}")
first, last = system(mains[0]), system(mains[2])
if "<available_references>" not in first or "<available_skills>" not in first:
    sys.exit("the first step carried no references or skills block: the boundary was not tested")
if "changed upstream" in last:
    sys.exit("the last step carried opencode\x27s fresh copy of the remote rule, not ctxgraph\x27s")
if last != first:
    sys.exit("the last step is not the first one with ctxgraph\x27s rule in place:\n--- first\n" + first + "\n--- last\n" + last)
print("e2e serve: ok, ctxgraph\x27s copy of the changed remote rule served in place")
' "$DIR" "$PROJ" || { KEEP=1; die "kept $RUN for inspection"; }
