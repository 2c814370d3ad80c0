# lib.sh - sourced by the recording scripts in this directory; defines no behaviour on its own.
#
# The oracle is the real opencode binary, installed from the npm registry (opencode-ai ships the
# linux-x64 executable through its optional dependency opencode-linux-x64; no Bun or provider
# package is needed). Everything else a recording needs lives in this directory.
#
#   ORACLE_CACHE       npm install dir and scratch runs (default /tmp/oracle)
#   OPENCODE_VERSION   the pinned release (default 1.18.33)

ORACLE_CACHE=${ORACLE_CACHE:-/tmp/oracle}
OPENCODE_VERSION=${OPENCODE_VERSION:-1.18.33}

# oracle_bin: print the opencode executable, installing opencode-ai@$OPENCODE_VERSION into
# $ORACLE_CACHE first if it is not there. Install output goes to stderr.
oracle_bin() {
  local bin=$ORACLE_CACHE/node_modules/.bin/opencode
  if [ ! -x "$bin" ]; then
    mkdir -p "$ORACLE_CACHE"
    # The same lock the Rust tests take (test-support/src/opencode.rs) before they install it.
    (
      flock 9
      [ -x "$bin" ] && exit 0
      [ -f "$ORACLE_CACHE/package.json" ] ||
        printf '{"name":"ctxgraph-oracle","private":true}\n' >"$ORACLE_CACHE/package.json"
      cd "$ORACLE_CACHE" && npm install --no-audit --no-fund "opencode-ai@$OPENCODE_VERSION" >&2
    ) 9>"$ORACLE_CACHE/.install.lock" || return 1
  fi
  # opencode-ai's postinstall links the platform binary; if npm skipped it, use that binary.
  if ! "$bin" --version >/dev/null 2>&1; then
    bin=$ORACLE_CACHE/node_modules/opencode-linux-x64/bin/opencode
  fi
  printf '%s\n' "$bin"
}

# isolation_env RUN: set ISOLATION to the variables that make opencode see nothing of this
# machine but the scratch dir RUN: fresh HOME and XDG dirs, its own managed-config dir instead
# of /etc/opencode, and no autoupdate, models.dev fetch, sharing or LSP downloads. RUN must
# hold home/ config/ data/ cache/ state/ managed/.
isolation_env() {
  local run=$1
  ISOLATION=(
    HOME="$run/home"
    XDG_CONFIG_HOME="$run/config" XDG_DATA_HOME="$run/data"
    XDG_CACHE_HOME="$run/cache" XDG_STATE_HOME="$run/state"
    OPENCODE_TEST_MANAGED_CONFIG_DIR="$run/managed"
    OPENCODE_DISABLE_AUTOUPDATE=1 OPENCODE_DISABLE_MODELS_FETCH=1
    OPENCODE_DISABLE_SHARE=1 OPENCODE_DISABLE_LSP_DOWNLOAD=1
  )
}
