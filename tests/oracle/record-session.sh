#!/usr/bin/env bash
# record-session.sh - record tests/session/<NAME>/ from the REAL opencode binary: a whole
# multi-turn session driven by the scenario tests/oracle/session-scenarios/<NAME>.json against
# the scripted fake model (fake_model.py --script, 127.0.0.1 only).
#
# usage: tests/oracle/record-session.sh [NAME...]     (no NAME: every scenario)
#   ORACLE_CACHE            opencode install (default /tmp/oracle; see lib.sh)
#   ORACLE_SESSION_SCRATCH  scratch runs (default /tmp/oracle-session). The fixture project is
#                           <scratch>/<NAME>/proj: its path is recorded in case.json and its
#                           length decides where tool outputs are cut, so keep the default
#                           unless you mean to change every recorded cut.
#   ORACLE_RUN_TIMEOUT      seconds per opencode command (default 120)
#
# Per scenario: a fresh fixture project (session.py project) and isolated HOME/XDG dirs
# (lib.sh), the fake model serving the scenario's replies, then one `opencode run` per prompt,
# continuing the first run's session (-s ID). The pseudo prompt `/summarize` (or
# `/summarize auto`) is a manual compaction, what the TUI's /compact does: POST
# /session/ID/summarize to an `opencode serve` on a free loopback port. Finally `opencode
# export ID`, and session.py fixture writes tests/session/<NAME>/ from the export and the
# captured requests. Raw captures stay in the scratch run dir. Any failure stops the script
# before the fixture is replaced.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
SCENARIOS=$HERE/session-scenarios
FIXTURES=$ROOT/tests/session
SCRATCH=${ORACLE_SESSION_SCRATCH:-/tmp/oracle-session}
TIMEOUT=${ORACLE_RUN_TIMEOUT:-120}
VERSION=1.18.33
MODEL=fake/fake-model

die() { echo "record-session.sh: $*" >&2; exit 1; }

# hermetic environment: no inherited opencode flags, pinned version
for v in $(compgen -e); do case $v in OPENCODE_*) unset "$v" ;; esac; done
export OPENCODE_VERSION=$VERSION
. "$HERE/lib.sh"
export LC_ALL=C.UTF-8 PYTHONIOENCODING=utf-8

if [ $# -gt 0 ]; then NAMES=("$@"); else
  mapfile -t NAMES < <(cd "$SCENARIOS" && for f in *.json; do echo "${f%.json}"; done | LC_ALL=C sort)
fi
for name in "${NAMES[@]}"; do [ -f "$SCENARIOS/$name.json" ] || die "no such scenario: $name"; done

BIN=$(oracle_bin) || die "installing opencode-ai@$VERSION into $ORACLE_CACHE failed"
got=$("$BIN" --version 2>/dev/null) || die "cannot run $BIN"
[ "$got" = "$VERSION" ] || die "oracle is opencode $got, expected $VERSION"

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_for FILE PATTERN: until FILE exists and matches PATTERN; at most 20 s
wait_for() {
  local _
  for _ in $(seq 100); do grep -qs -- "$2" "$1" && return 0; sleep 0.2; done
  return 1
}

# summarize RUN SID STEP AUTO: a manual compaction through a loopback `opencode serve`
summarize() {
  local run=$1 sid=$2 step=$3 auto=$4 port pid rc=0
  port=$(free_port)
  timeout "$TIMEOUT" "$BIN" serve --hostname 127.0.0.1 --port "$port" \
    </dev/null >"$run/step$step.out" 2>"$run/step$step.err" &
  pid=$!
  if wait_for "$run/step$step.out" "listening on"; then
    curl -sS -m "$TIMEOUT" -X POST "http://127.0.0.1:$port/session/$sid/summarize" \
      -H 'Content-Type: application/json' \
      -d "{\"providerID\":\"fake\",\"modelID\":\"${MODEL#fake/}\",\"auto\":$auto}" \
      >"$run/step$step.summarize" || rc=$?
    # with auto:true the session loop goes on in the background after the reply
    [ "$auto" = false ] || sleep 3
  else
    rc=1
  fi
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  return $rc
}

# drive RUN: every prompt of the scenario against the fake model; prints the session id
drive() {
  local run=$1 spec=$2 step=0 sid= prompt words
  local -a prompts
  mapfile -t prompts < <(python3 "$HERE/session.py" prompts "$spec")
  cd "$run/proj"
  for prompt in "${prompts[@]}"; do
    step=$((step + 1))
    case $prompt in
      "/summarize") summarize "$run" "$sid" $step false || return 1 ;;
      "/summarize auto") summarize "$run" "$sid" $step true || return 1 ;;
      *)
        # one argument per word (opencode run stores a single spaced argument with its quotes);
        # stdin from /dev/null (opencode run appends piped stdin to the message)
        read -ra words <<<"$prompt"
        timeout "$TIMEOUT" "$BIN" run ${sid:+-s "$sid"} -m "$MODEL" "${words[@]}" \
          </dev/null >"$run/step$step.out" 2>"$run/step$step.err" ||
          { tail -5 "$run/step$step.err" >&2; return 1; }
        ;;
    esac
    if [ -z "$sid" ]; then
      sid=$(timeout "$TIMEOUT" "$BIN" session list --format json </dev/null |
        python3 -c 'import json, sys; print(json.load(sys.stdin)[0]["id"])') || return 1
    fi
  done
  timeout "$TIMEOUT" "$BIN" export "$sid" </dev/null >"$run/export.json" 2>"$run/export.err" || return 1
}

record() {
  local name=$1 spec=$SCENARIOS/$1.json run=$SCRATCH/$1 model port rc=0
  rm -rf "$run"
  mkdir -p "$run"/{home,config/opencode,data,cache,state,managed,cap}
  run=$(cd "$run" && pwd -P)
  python3 "$HERE/session.py" project "$spec" "$run/proj"
  git -C "$run/proj" init -q
  python3 "$HERE/fake_model.py" "$run/cap" --script "$spec" --var "PROJ=$run/proj" \
    --max-requests 60 --timeout 400 &
  model=$!
  wait_for "$run/cap/port" . || { kill "$model"; die "[$name] the fake model did not start"; }
  port=$(cat "$run/cap/port")
  isolation_env "$run"
  (
    export "${ISOLATION[@]}"
    OPENCODE_CONFIG_CONTENT=$(python3 "$HERE/session.py" config "$spec" "$port")
    export OPENCODE_CONFIG_CONTENT
    drive "$run" "$spec"
  ) || rc=$?
  kill "$model" 2>/dev/null || true
  wait "$model" 2>/dev/null || true
  [ $rc -eq 0 ] || die "[$name] opencode failed (logs in $run)"
  python3 "$HERE/session.py" fixture "$spec" "$run" "$FIXTURES/$name"
  echo "[$name] $(wc -l <"$run/cap/log.jsonl") requests -> tests/session/$name" >&2
}

for name in "${NAMES[@]}"; do record "$name"; done
