#!/usr/bin/env bash
# record.sh - record the expected outputs of tests/conformance/<ID>/ from the REAL opencode
# binary (the oracle: capture.sh in this directory, which installs opencode-ai from npm) into
# snapshots/conformance__<ID>.snap.  Expected outputs never come from anywhere else.
#
# usage: tests/oracle/record.sh [ID...]        (no ID: every case with a case.toml)
#   RECORD_JOBS=N   record N cases in parallel (default 1)
#   ORACLE_CACHE    opencode install + scratch runs (default /tmp/oracle; see lib.sh)
#
# Per case: copy the case to a scratch dir, `git init -q` every [run].git dir (and commit in
# [run].git_commit dirs), give every [run].git_head_only dir a `.git` holding only `HEAD`,
# then run capture.sh -m full (and -m read -R FILE per [run].reads entry)
# with -C cwd, -H home/, -g global/ and [run].env exported, ORACLE_MODEL unset (model
# fake/fake-model), and render the snapshot; capture.sh writes the case's listing.txt (the
# order the disk listed each folder of the run in, ORACLE_LISTING_OF).  Cases with `oracle_error` in case.toml are expected
# to make opencode fail: the failure is checked and no snapshot is written.  Cases with
# [run].oracle_user chmod 000 the [run].unreadable files and run opencode as that unprivileged
# user (created if missing; needs root).  Re-runnable and idempotent; any capture failure aborts.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CAPTURE=$HERE/capture.sh
CASES=$ROOT/tests/conformance
SNAPS=$ROOT/snapshots
VERSION=1.18.33

die() { echo "record.sh: $*" >&2; exit 1; }

# hermetic environment: no inherited opencode flags, pinned version
for v in $(compgen -e); do case $v in OPENCODE_*) unset "$v" ;; esac; done
export OPENCODE_VERSION=$VERSION
. "$HERE/lib.sh"
export ORACLE_CACHE
export LC_ALL=C.UTF-8 PYTHONIOENCODING=utf-8

if [ $# -gt 0 ]; then IDS=("$@"); else
  mapfile -t IDS < <(cd "$CASES" && for d in */; do [ -f "$d/case.toml" ] && echo "${d%/}"; done | LC_ALL=C sort)
fi
[ ${#IDS[@]} -gt 0 ] || die "no cases"
for id in "${IDS[@]}"; do [ -f "$CASES/$id/case.toml" ] || die "no such case: $id"; done

# make sure the oracle is installed and is the pinned version
REALBIN=$(oracle_bin) || die "installing opencode-ai@$VERSION into $ORACLE_CACHE failed"
got=$("$REALBIN" --version 2>/dev/null) || die "cannot run $REALBIN"
[ "$got" = "$VERSION" ] || die "oracle is opencode $got, expected $VERSION"

JOBS=${RECORD_JOBS:-1}
if [ "$JOBS" -gt 1 ] && [ ${#IDS[@]} -gt 1 ]; then
  printf '%s\n' "${IDS[@]}" | RECORD_JOBS=1 xargs -P "$JOBS" -n 1 "$0" || die "some cases failed"
  exit 0
fi

record_case() {
  local id=$1 dir=$CASES/$1 meta rc
  # ---- parse case.toml (python3 tomllib) into bash variables
  meta=$(python3 - "$dir/case.toml" <<'EOF'
import shlex, sys, tomllib
c = tomllib.load(open(sys.argv[1], "rb"))
known = {"description", "rules", "covers", "source", "recorded_with", "binary_note", "oracle_error", "run"}
bad = set(c) - known
run = c.get("run", {})
bad |= {"run." + k for k in set(run) - {"cwd", "git", "git_commit", "git_head_only", "env", "reads", "unreadable", "mode_000", "oracle_user"}}
if bad:
    sys.exit("unknown case.toml keys: %s" % ", ".join(sorted(bad)))
if c.get("source") != "oracle":
    sys.exit("source must be \"oracle\"")
cwd = run.get("cwd", ".")
env = run.get("env", {})
lists = {k: run.get(k, []) for k in ("git", "git_commit", "git_head_only", "reads", "unreadable", "mode_000")}
for p in [cwd, *sum(lists.values(), [])]:
    if not isinstance(p, str) or p.startswith("/"):
        sys.exit("paths must be relative strings: %r" % (p,))
flags = ["-m", "full"] + (["-C", cwd] if cwd != "." else [])
def q(s): return shlex.quote(s)
def arr(name, xs): print("%s=(%s)" % (name, " ".join(q(x) for x in xs)))
print("CWD=" + q(cwd))
for k, v in lists.items():
    arr(k.upper(), v)
arr("ENVS", ["%s=%s" % (k, v) for k, v in sorted(env.items())])
print("ORACLE_ERROR=" + q("yes" if "oracle_error" in c else ""))
print("ORACLE_USER=" + q(run.get("oracle_user", "")))
print("RECORDED_WITH_TOML=" + q(c.get("recorded_with", "")))
EOF
  ) || die "$id: bad case.toml"
  local CWD ORACLE_ERROR ORACLE_USER RECORDED_WITH_TOML; local -a GIT GIT_COMMIT GIT_HEAD_ONLY READS UNREADABLE ENVS
  eval "$meta"

  SCR=$(mktemp -d "${TMPDIR:-/tmp}/ctxgraph-record.XXXXXX")  # global: the EXIT trap needs it
  trap 'rm -rf "$SCR"' EXIT
  local scr=$SCR
  cp -a "$dir/proj" "$scr/proj"
  local -a flags=(-m full) common=()
  [ "$CWD" = . ] || common+=(-C "$CWD")
  if [ -d "$dir/home" ]; then cp -a "$dir/home" "$scr/home"; common+=(-H "$scr/home"); fi
  if [ -d "$dir/global" ]; then cp -a "$dir/global" "$scr/global"; common+=(-g "$scr/global"); fi
  local g
  for g in "${GIT[@]}"; do
    [ -d "$scr/proj/$g" ] || die "$id: git dir $g missing"
    git -C "$scr/proj/$g" -c init.defaultBranch=main init -q
  done
  for g in "${GIT_HEAD_ONLY[@]}"; do
    [ -d "$scr/proj/$g" ] || die "$id: git_head_only dir $g missing"
    mkdir -p "$scr/proj/$g/.git" && printf 'ref: refs/heads/main\n' > "$scr/proj/$g/.git/HEAD"
  done
  for g in "${GIT_COMMIT[@]}"; do
    GIT_AUTHOR_DATE=2000-01-01T00:00:00Z GIT_COMMITTER_DATE=2000-01-01T00:00:00Z \
      git -C "$scr/proj/$g" -c user.name=oracle -c user.email=oracle@example.invalid add -A
    GIT_AUTHOR_DATE=2000-01-01T00:00:00Z GIT_COMMITTER_DATE=2000-01-01T00:00:00Z \
      git -C "$scr/proj/$g" -c user.name=oracle -c user.email=oracle@example.invalid commit -qm init
  done

  # ---- [run].mode_000: chmod 000 in the copy capture.sh takes (cp -a keeps modes); as root
  # opencode still reads them, which is what such a case pins.
  for g in "${MODE_000[@]}"; do chmod 000 "$scr/proj/$g"; done

  # ---- optional: run opencode as an unprivileged user with real mode-000 files.  capture.sh is
  # unchanged; ORACLE_CACHE points at a scratch cache whose "opencode" is a wrapper that chowns
  # the scratch run dir to the user, chmods the unreadable files 000 and drops privileges.
  # The order this disk lists each folder of the run in goes to the case's listing.txt:
  # the runners lay the case out in it (opencode's glob takes a folder reverse-listed).
  local -a cenv=(ORACLE_LISTING_OF="$dir")
  if [ -n "$ORACLE_USER" ]; then
    [ "$(id -u)" = 0 ] || die "$id: needs root to run opencode as $ORACLE_USER"
    id -u "$ORACLE_USER" >/dev/null 2>&1 ||
      useradd --system --no-create-home --shell /usr/sbin/nologin "$ORACLE_USER" ||
      die "$id: cannot create user $ORACLE_USER"
    chmod 755 "$scr"; mkdir -p "$scr/cache/node_modules/.bin"
    local real; real=$(readlink -f "$REALBIN")
    {
      echo '#!/bin/sh'
      echo 'set -e'
      echo "[ \"\${1:-}\" = --version ] && exec '$real' --version"
      echo 'RUN=$(dirname "$HOME")'
      echo "chown -R '$ORACLE_USER:' \"\$RUN\""
      for g in "${UNREADABLE[@]}"; do echo "chmod 000 \"\$RUN/proj/$g\""; done
      echo "exec setpriv --reuid='$ORACLE_USER' --regid=\"\$(id -g '$ORACLE_USER')\" --init-groups -- '$real' \"\$@\""
    } > "$scr/cache/node_modules/.bin/opencode"
    chmod 755 "$scr/cache/node_modules/.bin/opencode"
    cenv+=(ORACLE_CACHE="$scr/cache")
  elif [ ${#UNREADABLE[@]} -gt 0 ]; then
    echo "record.sh: $id: note: [run].unreadable is NOT applied (no oracle_user); files recorded readable" >&2
  fi

  cap() {  # cap OUTFILE ARGS... : one capture.sh run; fails loudly
    local out=$1; shift
    set +e
    env "${ENVS[@]}" "${cenv[@]}" "$CAPTURE" "$@" "${common[@]}" "$scr/proj" >"$out" 2>"$out.err"
    rc=$?
    set -e
    if grep -q 'opencode run failed' "$out.err" && [ "$rc" = 0 ]; then rc=97; fi
    return 0
  }

  local desc="capture.sh ${flags[*]}"
  [ "$CWD" = . ] || desc+=" -C $CWD"
  [ -d "$dir/home" ] && desc+=" -H home/"
  [ -d "$dir/global" ] && desc+=" -g global/"
  [ ${#ENVS[@]} -eq 0 ] || desc="${ENVS[*]} $desc"
  local r
  for r in "${READS[@]}"; do desc+=" ; + -m read -R $r"; done
  [ -z "$ORACLE_USER" ] || desc+=" ; opencode run as user $ORACLE_USER"
  [ "$desc" = "$RECORDED_WITH_TOML" ] ||
    echo "record.sh: $id: warning: case.toml recorded_with differs from: $desc" >&2

  cap "$scr/full.out" "${flags[@]}"
  if [ -n "$ORACLE_ERROR" ]; then
    [ "$rc" != 0 ] || die "$id: oracle_error is set but opencode succeeded; remove oracle_error and re-record"
    rm -f "$SNAPS/conformance__$id.snap"
    echo "== $id: opencode failed as expected (capture rc=$rc), no snapshot; stderr tail:"
    tail -5 "$scr/full.out.err" | sed 's/^/   /'
    return 0
  fi
  [ "$rc" = 0 ] || { cat "$scr/full.out.err" >&2; die "$id: capture.sh -m full failed (rc=$rc)"; }
  local -a pairs=() i=0
  for r in "${READS[@]}"; do
    i=$((i + 1))
    cap "$scr/read$i.out" -m read -R "$r"
    [ "$rc" = 0 ] || { cat "$scr/read$i.out.err" >&2; die "$id: capture.sh -m read -R $r failed (rc=$rc)"; }
    pairs+=("$r" "$scr/read$i.out")
  done

  mkdir -p "$SNAPS"
  ORACLE_DIR=$HERE ORACLE_BIN=$REALBIN \
    python3 - "$id" "$desc" "$VERSION" "$SNAPS/conformance__$id.snap" "$scr/full.out" "${pairs[@]}" <<'EOF'
import importlib.util, os, sys
cid, desc, version, dest, full = sys.argv[1:6]
pairs = sys.argv[6:]
def die(msg):
    sys.exit("record.sh: %s: %s" % (cid, msg))
def load(p):
    with open(p, "rb") as f:
        return f.read().decode("utf-8")  # strict: the capture is JSON-decoded text, always valid
s = load(full)
start = s.find("You are powered by the model named ")
if start < 0:
    die("no 'You are powered by the model named' in the captured system prompt")
if not s[start:].startswith("You are powered by the model named fake-model. The exact model ID is fake/fake-model\n"):
    die("unexpected model line")
system = s[start:]
# The skills block follows the instructions: it starts with opencode's text skills/intro,
# read from the binary as record-assets.py finds it.
spec = importlib.util.spec_from_file_location("record_assets", os.path.join(os.environ["ORACLE_DIR"], "record-assets.py"))
record_assets = importlib.util.module_from_spec(spec)
spec.loader.exec_module(record_assets)
with open(os.environ["ORACLE_BIN"], "rb") as f:
    skills_intro = record_assets.find_assets(f.read())["skills/intro"][0]
cut = system.rfind("\n" + skills_intro + "\n")
if cut < 0:
    die("no skills block after the instructions")
system = system[:cut]
cut = system.rfind("\n<mcp_instructions>\n")
if cut >= 0:
    system = system[:cut]
if "</env>" not in system:
    die("no </env> in the system slice")
sections = [("system", system)]
for rel, path in zip(pairs[0::2], pairs[1::2]):
    r = load(path)
    if "<path>" not in r or "</content>" not in r:
        die("read of %s did not produce a file read result:\n%s" % (rel, r[:2000]))
    a, b = r.find("<system-reminder>"), r.rfind("</system-reminder>")
    sections.append(("nearby " + rel, r[a:b + len("</system-reminder>")] if a >= 0 and b > a else ""))
d = "%s: recorded by tests/oracle/record.sh (%s) from opencode %s" % (cid, desc, version)
d = d.replace("\\", "\\\\").replace('"', '\\"')
out = "---\nsource: tests/conformance.rs\ndescription: \"%s\"\nexpression: rendered\n---\n" % d
for name, text in sections:
    out += "=== %s: %d bytes\n%s\n" % (name, len(text.encode("utf-8")), text)
out += "=== end\n"
tmp = dest + ".tmp.%d" % os.getpid()
with open(tmp, "w", encoding="utf-8", newline="") as f:
    f.write(out)
os.replace(tmp, dest)
EOF
  echo "== $id: wrote snapshots/conformance__$id.snap (${#READS[@]} read(s))"
}

for id in "${IDS[@]}"; do
  # not `( ... ) || die`: that would switch off set -e inside the subshell
  set +e; ( set -e; record_case "$id" ); st=$?; set -e
  [ "$st" = 0 ] || die "$id: recording failed"
done
