#!/usr/bin/env bash
# capture.sh - run the real opencode once on a copy of a fixture and print what it sent to the
# model: the system text (-m full) or the read tool's result (-m read).
#
# usage: capture.sh [-m full|read] [-C SUBDIR] [-g DIR] [-H DIR] [-R FILE] FIXTURE
#   -m full    the system text of the main request, exact bytes, no newline added (default)
#   -m read    the tool result(s) the model got back after reading FILE (needs -R)
#   -C SUBDIR  start opencode in FIXTURE/SUBDIR
#   -g DIR     seed $XDG_CONFIG_HOME/opencode with DIR's contents (global AGENTS.md, config)
#   -H DIR     seed $HOME with DIR's contents (~/.claude/CLAUDE.md, ~/rules.md)
#   -R FILE    the fake model first asks to read FIXTURE/FILE
#
# The fixture is copied into a fresh $ORACLE_CACHE/run.XXXXXX/proj (opencode writes $schema
# into config files) and opencode sees only that run dir (lib.sh: isolation_env). Variables
# in the caller's environment (OPENCODE_DISABLE_CLAUDE_CODE=1, …) reach opencode. The model
# is "fake/fake-model", served by fake_model.py on 127.0.0.1 and injected through
# OPENCODE_CONFIG_CONTENT, so a fixture's extra config must come from files or
# OPENCODE_CONFIG. Scratch paths in the output become <FIXTURE>, <XDG_CONFIG>, <HOME> and
# <RUN>, and the date line's value <DATE>. Exit status: 0, or non-zero when nothing was
# captured; "opencode run failed" on stderr when opencode itself failed.
# ORACLE_MODEL (default fake-model) is the model id under provider `fake` (B1 picks the model
# prompt by it); ORACLE_AGENT, when set, is passed as --agent.
# ORACLE_LISTING_OF (a case directory), when set, gets the run's listing.txt (listing.py).
# ORACLE_RUN_TIMEOUT (seconds, default 120) bounds the opencode run; a busy machine needs more
# than the ~5 s an idle one takes.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HERE/lib.sh"

usage() { sed -n '4,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
MODE=full SUBDIR=. GLOBAL= HOMESEED= READ=
while getopts "m:C:g:H:R:" opt; do
  case $opt in
    m) MODE=$OPTARG ;; C) SUBDIR=$OPTARG ;; g) GLOBAL=$OPTARG ;; H) HOMESEED=$OPTARG ;;
    R) READ=$OPTARG ;; *) usage ;;
  esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] && [ -d "$1" ] || usage
case $MODE in full) ;; read) [ -n "$READ" ] || usage ;; *) usage ;; esac
FIXTURE=$(cd "$1" && pwd)
BIN=$(oracle_bin)

RUN=$(mktemp -d "$ORACLE_CACHE/run.XXXXXX")
SERVER=
finish() {
  [ -z "$SERVER" ] || { kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; }
  # ORACLE_LISTING_OF=CASE: write CASE/listing.txt, the order this disk listed the run's
  # folders in (listing.py), before the run is removed.
  [ -z "${ORACLE_LISTING_OF:-}" ] ||
    python3 "$HERE/listing.py" "$RUN" "$ORACLE_LISTING_OF" proj=proj home=home config/opencode=global
  rm -rf "$RUN"
}
trap finish EXIT
mkdir -p "$RUN"/{home,config/opencode,data,cache,state,managed,requests}
cp -a "$FIXTURE" "$RUN/proj"
[ -z "$GLOBAL" ] || cp -a "$GLOBAL"/. "$RUN/config/opencode/"
[ -z "$HOMESEED" ] || cp -a "$HOMESEED"/. "$RUN/home/"

# The model server: bounded in requests and time, so nothing outlives a hung opencode.
RUN_TIMEOUT=${ORACLE_RUN_TIMEOUT:-120}
args=("$RUN/requests" --max-requests 6 --timeout $((RUN_TIMEOUT + 30)))
[ -z "$READ" ] || args+=(--tool-call "{\"name\":\"read\",\"arguments\":{\"filePath\":\"$RUN/proj/$READ\"}}")
python3 "$HERE/fake_model.py" "${args[@]}" &
SERVER=$!
for _ in $(seq 50); do [ -f "$RUN/requests/port" ] && break; sleep 0.1; done
[ -f "$RUN/requests/port" ] || { echo "capture.sh: the fake model did not start" >&2; exit 1; }
PORT=$(cat "$RUN/requests/port")

MODEL=${ORACLE_MODEL:-fake-model}
isolation_env "$RUN"
export "${ISOLATION[@]}"
export OPENCODE_CONFIG_CONTENT='{"provider":{"fake":{"npm":"@ai-sdk/openai-compatible","name":"Fake",
 "options":{"baseURL":"http://127.0.0.1:'"$PORT"'/v1","apiKey":"x"},"models":{"'"$MODEL"'":{"name":"'"$MODEL"'"}}}},
 "model":"fake/'"$MODEL"'","small_model":"fake/'"$MODEL"'","autoupdate":false,"share":"disabled"}'
AGENT_ARGS=(); [ -z "${ORACLE_AGENT:-}" ] || AGENT_ARGS=(--agent "$ORACLE_AGENT")
(cd "$RUN/proj/$SUBDIR" && timeout "$RUN_TIMEOUT" "$BIN" run -m "fake/$MODEL" "${AGENT_ARGS[@]}" hi >"$RUN/stdout" 2>"$RUN/stderr") ||
  { echo "opencode run failed; stderr:" >&2; tail -20 "$RUN/stderr" >&2; }

# opencode sends a title request (no tools) and the main request (with tools); after a tool
# call, the next main request carries the tool result.
python3 - "$RUN" "$MODE" "$(cd "$RUN/proj" && pwd -P)" <<'EOF'
import glob, json, re, sys

run, mode, real_proj = sys.argv[1:4]
paths = glob.glob(run + "/requests/req-*.json")
requests = [json.load(open(p)) for p in sorted(paths, key=lambda p: int(p.rsplit("-", 1)[1][:-5]))]
main = [r for r in requests if "tools" in r] or requests[-1:]
if not main:
    sys.exit("capture.sh: no request captured")

# Longest paths first: the project lives inside the run dir.
PLACEHOLDERS = [(real_proj, "<FIXTURE>"), (run + "/proj", "<FIXTURE>"),
                (run + "/config", "<XDG_CONFIG>"), (run + "/home", "<HOME>"), (run, "<RUN>")]

def normalise(text):
    for path, name in PLACEHOLDERS:
        text = text.replace(path, name)
    return re.sub(r"(Today's date: )[^\n]*", r"\1<DATE>", text)

if mode == "full":
    system = "\n".join(m["content"] for m in main[0]["messages"] if m["role"] == "system")
    sys.stdout.write(normalise(system))
else:
    for request in main[1:]:
        for message in request["messages"]:
            if message["role"] == "tool":
                content = message["content"]
                text = content if isinstance(content, str) else json.dumps(content, indent=1)
                sys.stdout.write(normalise(text) + "\n")
EOF
