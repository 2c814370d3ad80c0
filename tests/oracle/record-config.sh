#!/usr/bin/env bash
# record-config.sh [ID...] - records `opencode debug config` for the config fixtures in
# tests/config/<ID> from the real opencode binary (installed from npm by lib.sh), with the
# isolation capture.sh uses (lib.sh: fresh HOME, XDG dirs and managed dir; autoupdate,
# models fetch, share and LSP downloads off) and an otherwise empty environment. Writes tests/config/<ID>/oracle.out: the exit code, stdout, stderr,
# scratch paths replaced by <RUN>. Expected outputs come only from here.
#
# A case dir holds case.toml and any of proj/ (the project; `git = true` runs git init),
# global/ (copied to $XDG_CONFIG_HOME/opencode), home/, managed/, data/ (to
# $XDG_DATA_HOME/opencode), extra/. In case.toml, `cwd = "sub"` and `[env]` entries
# (<RUN> in a value is the scratch dir) are honoured.
#
# With `agent = "NAME"` in case.toml the case records `opencode debug agent NAME` instead
# (the agent fixtures: CONFIG_CASES=tests/opencode-agents). Its JSON keeps no opencode
# prose: `prompt` becomes {"blake3", "bytes"} and a built-in agent's `description` is dropped.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
CASES=${CONFIG_CASES:-$HERE/../config}
CACHE=$ORACLE_CACHE
BIN=$(oracle_bin) || { echo "record-config.sh: installing opencode-ai@$OPENCODE_VERSION failed" >&2; exit 2; }
ids=("$@"); [ ${#ids[@]} -gt 0 ] || mapfile -t ids < <(ls "$CASES")
for id in "${ids[@]}"; do
  dir=$CASES/$id
  RUN=$(mktemp -d "$CACHE/cfg.XXXXXX")
  mkdir -p "$RUN"/{home,config/opencode,data/opencode,cache,state,managed,proj}
  for part in proj home managed extra; do [ -d "$dir/$part" ] && cp -a "$dir/$part/." "$RUN/$part/"; done
  [ -d "$dir/global" ] && cp -a "$dir/global/." "$RUN/config/opencode/"
  [ -d "$dir/data" ] && cp -a "$dir/data/." "$RUN/data/opencode/"
  read_toml() { python3 -c "import sys,tomllib;c=tomllib.load(open('$dir/case.toml','rb'));$1"; }
  [ "$(read_toml 'print(c.get("git", True))')" = True ] && git -C "$RUN/proj" init -q
  cwd=$(read_toml 'print(c.get("cwd","."))')
  agent=$(read_toml 'print(c.get("agent",""))')
  cmd=(debug config); [ -z "$agent" ] || cmd=(debug agent "$agent")
  mapfile -t extra < <(read_toml 'print("\n".join(f"{k}={v}" for k,v in c.get("env",{}).items()))' | sed "s#<RUN>#$RUN#g")
  [ -n "${extra[0]:-}" ] || extra=()
  isolation_env "$RUN"
  set +e
  (cd "$RUN/proj/$cwd" && env -i PATH="$PATH" USER=tester "${ISOLATION[@]}" \
    "${extra[@]}" timeout 60 "$BIN" "${cmd[@]}" >"$RUN/stdout" 2>"$RUN/stderr")
  code=$?
  if [ -n "$agent" ] && [ "$code" = 0 ]; then
    python3 - "$RUN/stdout" <<'PY'
import json, sys, blake3
path = sys.argv[1]
agent = json.load(open(path))
if "prompt" in agent:
    text = agent["prompt"].encode()
    agent["prompt"] = {"blake3": blake3.blake3(text).hexdigest(), "bytes": len(text)}
if agent.get("native"):
    agent.pop("description", None)
open(path, "w").write(json.dumps(agent, indent=2) + "\n")
PY
  fi
  set -e
  { echo "exit: $code"; echo "--- stdout"; cat "$RUN/stdout"; echo "--- stderr"; cat "$RUN/stderr"; } |
    sed -e "s#$RUN#<RUN>#g" -e 's/\x1b\[[0-9;]*m//g' >"$dir/oracle.out"
  echo "$id: exit $code" >&2
  rm -rf "$RUN"
done
