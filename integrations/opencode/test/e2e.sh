#!/usr/bin/env bash
# e2e.sh - the opencode plugin end to end: the real opencode (opencode-ai 1.18.33, installed
# into $ORACLE_CACHE like tests/oracle/lib.sh does) runs a multi-step session against
# a scripted fake model on 127.0.0.1, with integrations/opencode/ctxgraph.ts loaded from the
# project's .opencode/plugin/. The model reads a file (which attaches a nested rule), reads
# the root AGENTS.md, edits it, and answers: four model steps, the last two after the edit.
# Passes when the plugin wrote one drift line per step, every one `"equal": true`, and the
# step after the edit really carried the edited rule.
#
# usage: integrations/opencode/test/e2e.sh
#   CTXGRAPH_BIN   the ctxgraph binary (default: built here with cargo)
#   ORACLE_CACHE   where opencode is installed (default /tmp/oracle)
# Skips (exit 0, with the reason) when node or npm is missing.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
VERSION=1.18.33
ORACLE_CACHE=${ORACLE_CACHE:-/tmp/oracle}
FAKE=$ROOT/tests/oracle/fake_model.py

die() { echo "e2e: $*" >&2; exit 1; }
for tool in node npm; do
  command -v "$tool" >/dev/null || { echo "e2e: skipped: $tool is not installed"; exit 0; }
done
command -v git >/dev/null || die "git is needed for the fixture repository"

if [ -z "${CTXGRAPH_BIN:-}" ]; then
  (cd "$ROOT" && cargo build --quiet -p ctxgraph-cli) || die "cargo build failed"
  CTXGRAPH_BIN=${CARGO_TARGET_DIR:-$ROOT/target}/debug/ctxgraph
fi
[ -x "$CTXGRAPH_BIN" ] || die "no ctxgraph binary at $CTXGRAPH_BIN"

# The real opencode, installed once into the cache (as capture.sh does).
BIN=$ORACLE_CACHE/node_modules/.bin/opencode
if ! "$BIN" --version >/dev/null 2>&1; then
  mkdir -p "$ORACLE_CACHE"
  [ -f "$ORACLE_CACHE/package.json" ] || echo '{"name":"oracle-cache","private":true}' > "$ORACLE_CACHE/package.json"
  (cd "$ORACLE_CACHE" && npm install --no-audit --no-fund "opencode-ai@$VERSION" >&2) || die "npm install failed"
fi
"$BIN" --version >/dev/null 2>&1 || BIN=$ORACLE_CACHE/node_modules/opencode-linux-x64/bin/opencode
[ "$("$BIN" --version)" = "$VERSION" ] || die "opencode is not $VERSION"

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

cat > "$RUN/script.json" <<'EOF'
{"replies": [
  {"kind": "main", "tool_calls": [{"name": "read", "arguments": {"filePath": "{PROJ}/sub/a.txt"}}]},
  {"kind": "main", "tool_calls": [{"name": "read", "arguments": {"filePath": "{PROJ}/AGENTS.md"}}]},
  {"kind": "main", "tool_calls": [{"name": "edit", "arguments": {"filePath": "{PROJ}/AGENTS.md",
    "oldString": "root rules", "newString": "root rules, edited by the model"}}]},
  {"kind": "main", "text": "done"}
]}
EOF
python3 "$FAKE" "$RUN/cap" --script "$RUN/script.json" --var "PROJ=$PROJ" --max-requests 12 --timeout 900 &
SRV=$!
for _ in $(seq 100); do [ -f "$RUN/cap/port" ] && break; sleep 0.1; done
[ -f "$RUN/cap/port" ] || die "the fake model did not start"
PORT=$(cat "$RUN/cap/port")

(
  export HOME=$RUN/home XDG_CONFIG_HOME=$RUN/config XDG_DATA_HOME=$RUN/data
  export XDG_CACHE_HOME=$RUN/cache XDG_STATE_HOME=$RUN/state
  export OPENCODE_TEST_MANAGED_CONFIG_DIR=$RUN/managed
  export OPENCODE_DISABLE_AUTOUPDATE=1 OPENCODE_DISABLE_MODELS_FETCH=1
  export OPENCODE_DISABLE_SHARE=1 OPENCODE_DISABLE_LSP_DOWNLOAD=1
  export OPENCODE_CONFIG_CONTENT='{"provider":{"fake":{"npm":"@ai-sdk/openai-compatible","name":"Fake",
    "options":{"baseURL":"http://127.0.0.1:'"$PORT"'/v1","apiKey":"x"},
    "models":{"fake-model":{"name":"fake-model","limit":{"context":200000,"output":4000}}}}},
    "model":"fake/fake-model","small_model":"fake/fake-model","autoupdate":false,"share":"disabled"}'
  export CTXGRAPH_BIN
  cd "$PROJ"
  timeout 840 "$BIN" run -m fake/fake-model read and edit </dev/null >"$RUN/run.out" 2>"$RUN/run.err"
) || { tail -20 "$RUN/run.err" >&2; die "opencode run failed"; }

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
