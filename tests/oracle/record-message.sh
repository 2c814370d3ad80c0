#!/usr/bin/env bash
# record-message.sh [ID...] - records tests/message/<ID>/oracle.out: the whole system message
# the real opencode sent (capture.sh -m full, model `fake/<model>` and `--agent <agent>` from
# case.toml), with each of opencode's own texts replaced by a marker naming its blake3
# (hash-opencode-texts.py). A case dir holds case.toml and proj/, optionally global/ and home/.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
CASES=$HERE/../message
BIN=$(oracle_bin) || { echo "record-message.sh: installing opencode-ai@$OPENCODE_VERSION failed" >&2; exit 2; }
ids=("$@"); [ ${#ids[@]} -gt 0 ] || mapfile -t ids < <(ls "$CASES")
for id in "${ids[@]}"; do
  dir=$CASES/$id
  read_toml() { python3 -c "import tomllib;c=tomllib.load(open('$dir/case.toml','rb'));print($1)"; }
  args=(-m full)
  [ -d "$dir/global" ] && args+=(-g "$dir/global")
  [ -d "$dir/home" ] && args+=(-H "$dir/home")
  ORACLE_MODEL=$(read_toml 'c["model"]') ORACLE_AGENT=$(read_toml 'c.get("agent","")') \
    "$HERE/capture.sh" "${args[@]}" "$dir/proj" >"$dir/raw.tmp"
  python3 "$HERE/hash-opencode-texts.py" "$BIN" <"$dir/raw.tmp" >"$dir/oracle.out"
  rm -f "$dir/raw.tmp"
  echo "$id: recorded" >&2
done
