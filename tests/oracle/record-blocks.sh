#!/usr/bin/env bash
# record-blocks.sh [ID...] - records the references (B3) and MCP (B4) blocks of the cases in
# tests/opencode-blocks/<ID> from the real opencode binary: one `opencode run` per case through
# capture.sh -m full (lib.sh's install and isolation, fake model on 127.0.0.1), the two blocks
# cut out of the system message, into tests/opencode-blocks/<ID>/oracle.out.
#
# A case dir holds case.toml, proj/ (git init'ed in a scratch copy) and optionally global/
# (copied to $XDG_CONFIG_HOME/opencode) and home/. MCP servers in a case are the fixture
# server, named in the config as {env:CTXGRAPH_MCP_FIXTURE} (exported here; the test sets the
# same variable). opencode's own sentence opening the references block is recorded as its
# blake3, never as text.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
CASES=$HERE/../opencode-blocks
export CTXGRAPH_MCP_FIXTURE=$HERE/mcp_server.py
BIN=$(oracle_bin) || { echo "record-blocks.sh: installing opencode-ai@$OPENCODE_VERSION failed" >&2; exit 2; }
# The references block opens with opencode's text references/intro, read from the binary as
# record-assets.py finds it.
REFERENCES_INTRO=$(python3 - "$HERE/record-assets.py" "$BIN" <<'PY'
import importlib.util, sys
spec = importlib.util.spec_from_file_location("record_assets", sys.argv[1])
record_assets = importlib.util.module_from_spec(spec)
spec.loader.exec_module(record_assets)
with open(sys.argv[2], "rb") as f:
    print(record_assets.find_assets(f.read())["references/intro"][0])
PY
)
ids=("$@"); [ ${#ids[@]} -gt 0 ] || mapfile -t ids < <(ls "$CASES")
for id in "${ids[@]}"; do
  dir=$CASES/$id
  [ -f "$dir/case.toml" ] || { echo "record-blocks.sh: no such case: $id" >&2; exit 2; }
  scratch=$(mktemp -d)
  cp -a "$dir/proj" "$scratch/proj"
  git -C "$scratch/proj" init -q
  flags=(-m full)
  [ -d "$dir/global" ] && flags+=(-g "$dir/global")
  [ -d "$dir/home" ] && flags+=(-H "$dir/home")
  "$HERE/capture.sh" "${flags[@]}" "$scratch/proj" >"$scratch/full.out"
  python3 - "$scratch/full.out" "$dir/oracle.out" "$REFERENCES_INTRO" <<'PY'
import sys, blake3
system = open(sys.argv[1], encoding="utf-8").read()
references_intro = sys.argv[3]
def cut(start, end):
    a = system.find(start)
    if a < 0:
        return "(none)"
    b = system.index(end, a) + len(end)
    return system[a:b]
references = cut(references_intro + "\n", "</available_references>")
head = references.split("\n", 1)[0]
if references != "(none)":
    marker = "<opencode-text blake3=%s bytes=%d>" % (blake3.blake3(head.encode()).hexdigest(), len(head.encode()))
    references = marker + references[len(head):]
out = "=== references\n%s\n=== mcp\n%s\n" % (references, cut("<mcp_instructions>\n", "\n</mcp_instructions>"))
open(sys.argv[2], "w", encoding="utf-8").write(out)
PY
  echo "$id: recorded" >&2
  rm -rf "$scratch"
done
