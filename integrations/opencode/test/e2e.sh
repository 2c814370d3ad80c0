#!/usr/bin/env bash
# e2e.sh - the opencode plugin end to end: the real opencode (opencode-ai 1.18.33, installed
# into $ORACLE_CACHE by tests/oracle/lib.sh) runs a multi-step session against the scripted
# fake model of tests/oracle/fake_model.py on 127.0.0.1, with integrations/opencode/ctxgraph.ts
# loaded from the project's .opencode/plugin/. The model reads a file (which attaches a nested
# rule), reads the root AGENTS.md, edits it, and answers: four model steps, the last two after
# the edit. Passes when the plugin wrote one drift line per step, every one `"equal": true`,
# and the step after the edit really carried the edited rule.
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
mkdir -p "$RUN"/{home,config/opencode,data,cache,state,managed,cap,proj}

# The project: a git repository with rules at the root, in a subdirectory and through an
# `instructions` glob, and the plugin where opencode discovers plugins.
PROJ=$(cd "$RUN/proj" && pwd -P)
git -C "$PROJ" -c init.defaultBranch=main init -q
printf 'root rules\n' > "$PROJ/AGENTS.md"
mkdir -p "$PROJ/sub" "$PROJ/docs" "$PROJ/.opencode/plugin"
printf 'sub rules\n' > "$PROJ/sub/AGENTS.md"
printf 'a\n' > "$PROJ/sub/a.txt"
printf 'style guide\n' > "$PROJ/docs/style.md"
printf '{ "instructions": ["docs/*.md"] }\n' > "$PROJ/opencode.json"
cp "$HERE/../ctxgraph.ts" "$PROJ/.opencode/plugin/ctxgraph.ts"
preinstall "$PROJ/.opencode"
preinstall "$RUN/config/opencode"

# One entry per agent step: read, read, edit, answer.
python3 - "$PROJ" >"$RUN/steps.json" <<'EOF'
import json, sys
proj = sys.argv[1]
call = lambda name, **arguments: {"tool_call": {"name": name, "arguments": arguments}}
print(json.dumps([
    call("read", filePath=f"{proj}/sub/a.txt"),
    call("read", filePath=f"{proj}/AGENTS.md"),
    call("edit", filePath=f"{proj}/AGENTS.md", oldString="root rules", newString="root rules, edited by the model"),
    {"text": "done"},
]))
EOF
python3 "$FAKE" "$RUN/cap" --steps "$RUN/steps.json" --max-requests 12 --timeout 900 &
SRV=$!
for _ in $(seq 100); do [ -f "$RUN/cap/port" ] && break; sleep 0.1; done
[ -f "$RUN/cap/port" ] || die "the fake model did not start"
PORT=$(cat "$RUN/cap/port")

isolation_env "$RUN"
CONFIG='{"provider":{"fake":{"npm":"@ai-sdk/openai-compatible","name":"Fake",
  "options":{"baseURL":"http://127.0.0.1:'"$PORT"'/v1","apiKey":"x"},
  "models":{"fake-model":{"name":"fake-model","limit":{"context":200000,"output":4000}}}}},
  "model":"fake/fake-model","small_model":"fake/fake-model","autoupdate":false,"share":"disabled"}'
# No registry during the run: npm's registry is a closed port on 127.0.0.1 (nothing listens
# on port 9), so an install opencode attempted would fail, and log so, rather than download.
(cd "$PROJ" && env "${ISOLATION[@]}" OPENCODE_CONFIG_CONTENT="$CONFIG" CTXGRAPH_BIN="$CTXGRAPH_BIN" \
  npm_config_registry=http://127.0.0.1:9/ \
  timeout 840 "$BIN" run -m fake/fake-model read and edit </dev/null >"$RUN/run.out" 2>"$RUN/run.err") ||
  { tail -20 "$RUN/run.err" >&2; die "opencode run failed"; }
! grep -rs "dependency install failed" "$RUN/data/opencode/log" >&2 ||
  die "opencode tried to install its plugin dependency: the pre-install was not taken"

python3 - "$RUN" "$PROJ" <<'EOF' || { KEEP=1; die "kept $RUN for inspection"; }
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
print(f"e2e: {len(mains)} model steps, {len(lines)} drift lines")
if len(mains) != 4:
    sys.exit(f"expected 4 model steps, the fake model saw {len(mains)}")
if len(lines) != len(mains):
    sys.exit(f"expected one drift line per step: {lines}")
bad = [line for line in lines if not line["equal"] or line["blocks"]]
if bad:
    sys.exit(f"drift: {bad}")
if any(line["cwd"] != proj for line in lines):
    sys.exit(f"drift lines for another directory: {lines}")
system = lambda body: "\n".join(m["content"] for m in body["messages"] if m["role"] == "system")
if "root rules, edited by the model" not in system(mains[3]):
    sys.exit("the last step did not carry the edited rule: the session did not test an edit")
if "root rules, edited by the model" in system(mains[1]):
    sys.exit("the rule was edited too early")
print("e2e: ok, zero drift")
EOF
