#!/usr/bin/env bash
# Install the real MCP peers used by the tests, pinned, into <repo>/.cache/peers/:
#   node/   npm: @modelcontextprotocol/server-everything and server-filesystem, the TypeScript
#           SDK (@modelcontextprotocol/sdk, the version server-everything uses) for the benchmarks,
#           and three MCP Apps servers (server-basic-vanillajs, server-budget-allocator, server-pdf)
#           for tests/apps/
#   inspector/  npm: the MCP Inspector (@modelcontextprotocol/inspector), whose --cli mode is an agent
#           of the gateway (tests/it/gateway_clients.rs); its own prefix, since it needs Node >= 22.19
#           (run with the Node 24 of scripts/install-node.sh)
#   venv/   Python venv with the MCP Python SDK (mcp) and FastMCP with its Tasks extension
#           (fastmcp, fastmcp-tasks, pydocket), used by fixtures/python/
#   env.sh  exports MCP_PEERS_DIR, MCP_EVERYTHING_JS, MCP_FILESYSTEM_JS, MCP_PYTHON,
#           MCP_PEERS_NODE_MODULES, MCP_INSPECTOR_JS, MCP_NODE24, MCP_APP_BASIC_JS,
#           MCP_APP_BUDGET_JS, MCP_APP_PDF_JS, MCP_APP_NODE
#
# Idempotent: each part is skipped when the pinned version is already installed.
# No interactive input; safe with CI=true on a fresh clone. Needs node (>= 20) + npm and python3 (>= 3.10).
# Environment knobs (all optional):
#   PEERS_PYTHON=/path/to/python3   interpreter used to create the venv (default: python3)
#   PEERS_SKIP_SMOKE=1              skip the quick "does it start on this node" checks
set -euo pipefail

EVERYTHING_VERSION=2026.8.31
FILESYSTEM_VERSION=2026.8.31
# The TypeScript SDK client for benches/peers/ts_client.mjs: the same version server-everything pulls in.
TS_SDK_VERSION=1.32.2
MCP_PY_VERSION=2.3.0
# FastMCP and its Tasks extension (fixtures/python/fastmcp_*_server.py); fastmcp 4.1.6 conflicts
# with fastmcp-tasks 4.1.4. pydocket runs the tasks; its memory:// backend is burner-redis behind
# redis-py (fastmcp-tasks excludes redis 8.1.0) and py-key-value-aio.
FASTMCP_VERSION=4.1.4
FASTMCP_TASKS_VERSION=4.1.4
PYDOCKET_VERSION=0.27.2
BURNER_REDIS_VERSION=0.1.7
REDIS_PY_VERSION=8.2.0
KEY_VALUE_VERSION=0.4.6
# The Inspector's CLI (v2: the maintained line; v1 takes security fixes only).
INSPECTOR_VERSION=2.12.0
# MCP Apps servers (a tool with a view; run with --stdio), for tests/apps/.
APP_BASIC_VERSION=2.0.3
APP_BUDGET_VERSION=2.0.3
APP_PDF_VERSION=2.0.4

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PEERS="$ROOT/.cache/peers"
NODE_DIR="$PEERS/node"
INSPECTOR_DIR="$PEERS/inspector"
VENV="$PEERS/venv"
START=$SECONDS

log() { printf '[install-peers] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

command -v node >/dev/null || die "node not found on PATH"
command -v npm >/dev/null || die "npm not found on PATH"
NODE_MAJOR="$(node -p 'process.versions.node.split(".")[0]')"
# Their dependency tree's engines floor is 20 (lru-cache, brace-expansion: "20 || >=22"; @hono/node-server >=20).
[ "$NODE_MAJOR" -ge 20 ] || die "node $(node --version) is too old (these servers need >= 20)"

mkdir -p "$NODE_DIR"

# ---------------------------------------------------------------- npm servers
installed_version() { # $1 = package name; prints version or nothing
  local pj="$NODE_DIR/node_modules/$1/package.json"
  [ -f "$pj" ] && node -p "require(process.argv[1]).version" "$pj" 2>/dev/null || true
}

EVERYTHING_JS="$NODE_DIR/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
FILESYSTEM_JS="$NODE_DIR/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
APP_BASIC_JS="$NODE_DIR/node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/index.js"
APP_BUDGET_JS="$NODE_DIR/node_modules/@modelcontextprotocol/server-budget-allocator/dist/index.js"
APP_PDF_JS="$NODE_DIR/node_modules/@modelcontextprotocol/server-pdf/dist/index.js"

# The npm install runs in the background while the venv is built (both are mostly downloads).
npm_status=cached
npm_pid=
if [ "$(installed_version @modelcontextprotocol/server-everything)" != "$EVERYTHING_VERSION" ] ||
   [ "$(installed_version @modelcontextprotocol/server-filesystem)" != "$FILESYSTEM_VERSION" ] ||
   [ "$(installed_version @modelcontextprotocol/sdk)" != "$TS_SDK_VERSION" ] ||
   [ "$(installed_version @modelcontextprotocol/server-basic-vanillajs)" != "$APP_BASIC_VERSION" ] ||
   [ "$(installed_version @modelcontextprotocol/server-budget-allocator)" != "$APP_BUDGET_VERSION" ] ||
   [ "$(installed_version @modelcontextprotocol/server-pdf)" != "$APP_PDF_VERSION" ] ||
   [ ! -f "$EVERYTHING_JS" ] || [ ! -f "$FILESYSTEM_JS" ] ||
   [ ! -f "$APP_BASIC_JS" ] || [ ! -f "$APP_BUDGET_JS" ] || [ ! -f "$APP_PDF_JS" ]; then
  log "npm: installing server-everything@$EVERYTHING_VERSION server-filesystem@$FILESYSTEM_VERSION sdk@$TS_SDK_VERSION server-basic-vanillajs@$APP_BASIC_VERSION server-budget-allocator@$APP_BUDGET_VERSION server-pdf@$APP_PDF_VERSION"
  # A private package.json keeps npm from walking up into the repo (and makes the prefix self-contained).
  [ -f "$NODE_DIR/package.json" ] ||
    printf '{\n  "name": "mcp-sidecar-test-peers",\n  "private": true\n}\n' >"$NODE_DIR/package.json"
  npm install --prefix "$NODE_DIR" --no-audit --no-fund --no-update-notifier --loglevel=error \
    --save-exact \
    "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION" \
    "@modelcontextprotocol/server-filesystem@$FILESYSTEM_VERSION" \
    "@modelcontextprotocol/sdk@$TS_SDK_VERSION" \
    "@modelcontextprotocol/server-basic-vanillajs@$APP_BASIC_VERSION" \
    "@modelcontextprotocol/server-budget-allocator@$APP_BUDGET_VERSION" \
    "@modelcontextprotocol/server-pdf@$APP_PDF_VERSION" >&2 &
  npm_pid=$!
  trap 'wait' EXIT # never leave the background npm running behind an early exit
  npm_status=installed
fi

# The Inspector: its own prefix (it needs Node >= 22.19; the machine's may be older), installed with
# the npm of scripts/install-node.sh's Node 24, in the background too.
NODE24_DIR="$("$ROOT/scripts/install-node.sh")"
INSPECTOR_JS="$INSPECTOR_DIR/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
inspector_version() {
  local pj="$INSPECTOR_DIR/node_modules/@modelcontextprotocol/inspector/package.json"
  [ -f "$pj" ] && node -p "require(process.argv[1]).version" "$pj" 2>/dev/null || true
}
inspector_status=cached
inspector_pid=
if [ "$(inspector_version)" != "$INSPECTOR_VERSION" ] || [ ! -f "$INSPECTOR_JS" ]; then
  log "npm: installing @modelcontextprotocol/inspector@$INSPECTOR_VERSION"
  mkdir -p "$INSPECTOR_DIR"
  [ -f "$INSPECTOR_DIR/package.json" ] ||
    printf '{\n  "name": "mcp-sidecar-test-inspector",\n  "private": true\n}\n' >"$INSPECTOR_DIR/package.json"
  PATH="$NODE24_DIR/bin:$PATH" npm install --prefix "$INSPECTOR_DIR" --no-audit --no-fund \
    --no-update-notifier --loglevel=error --save-exact \
    "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" >&2 &
  inspector_pid=$!
  trap 'wait' EXIT
  inspector_status=installed
fi

# ---------------------------------------------------------------- python venv
PY="${PEERS_PYTHON:-python3}"
command -v "$PY" >/dev/null || die "$PY not found on PATH"
"$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' ||
  die "$PY is $("$PY" --version 2>&1); mcp $MCP_PY_VERSION needs Python >= 3.10"

# The pinned Python packages as name==version, one line, in the order venv_versions prints them.
PY_PINS="mcp==$MCP_PY_VERSION fastmcp==$FASTMCP_VERSION fastmcp-tasks==$FASTMCP_TASKS_VERSION pydocket==$PYDOCKET_VERSION burner-redis==$BURNER_REDIS_VERSION redis==$REDIS_PY_VERSION py-key-value-aio==$KEY_VALUE_VERSION"
venv_versions() {
  "$VENV/bin/python" -c '
import importlib.metadata as m, sys
print(" ".join(f"{n}=={m.version(n)}" for n in sys.argv[1:]))' \
    mcp fastmcp fastmcp-tasks pydocket burner-redis redis py-key-value-aio 2>/dev/null || true
}

py_status=cached
if [ -x "$VENV/bin/python" ] && ! "$VENV/bin/python" -c '' 2>/dev/null; then
  log "venv: $VENV is broken (interpreter moved?); recreating"
  rm -rf "$VENV"
fi
if [ "$(venv_versions)" != "$PY_PINS" ]; then
  export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
  # The venv is made without pip and the host's pip drives it (pip >= 22.3 has --python): skipping
  # ensurepip saves ~4 s. Fall back to the venv's own pip (bootstrapped by ensurepip) if that fails.
  [ -x "$VENV/bin/python" ] || { log "venv: creating $VENV"; "$PY" -m venv --without-pip "$VENV"; }
  if "$VENV/bin/python" -m pip --version >/dev/null 2>&1; then
    PIP=("$VENV/bin/python" -m pip)
  elif "$PY" -m pip --python "$VENV/bin/python" --version >/dev/null 2>&1; then
    PIP=("$PY" -m pip --python "$VENV/bin/python")
  else
    "$VENV/bin/python" -m ensurepip --default-pip >&2
    PIP=("$VENV/bin/python" -m pip)
  fi
  log "venv: installing $PY_PINS"
  # shellcheck disable=SC2086 # PY_PINS is a list of requirement specifiers
  "${PIP[@]}" install --quiet $PY_PINS >&2
  [ "$(venv_versions)" = "$PY_PINS" ] || die "$PY_PINS did not install (got: $(venv_versions))"
  py_status=installed
fi

if [ -n "$npm_pid" ]; then
  wait "$npm_pid" || die "npm install failed"
fi
if [ -n "$inspector_pid" ]; then
  wait "$inspector_pid" || die "npm install of the Inspector failed"
fi
[ "$(inspector_version)" = "$INSPECTOR_VERSION" ] && [ -f "$INSPECTOR_JS" ] ||
  die "@modelcontextprotocol/inspector is not at $INSPECTOR_VERSION after install"
[ -f "$EVERYTHING_JS" ] || die "missing $EVERYTHING_JS"
[ -f "$FILESYSTEM_JS" ] || die "missing $FILESYSTEM_JS"
[ "$(installed_version @modelcontextprotocol/server-everything)" = "$EVERYTHING_VERSION" ] ||
  die "server-everything is not at $EVERYTHING_VERSION after install"
[ "$(installed_version @modelcontextprotocol/server-filesystem)" = "$FILESYSTEM_VERSION" ] ||
  die "server-filesystem is not at $FILESYSTEM_VERSION after install"
[ "$(installed_version @modelcontextprotocol/sdk)" = "$TS_SDK_VERSION" ] ||
  die "@modelcontextprotocol/sdk is not at $TS_SDK_VERSION after install"
for pkg_version in server-basic-vanillajs@$APP_BASIC_VERSION server-budget-allocator@$APP_BUDGET_VERSION \
    server-pdf@$APP_PDF_VERSION; do
  [ "$(installed_version "@modelcontextprotocol/${pkg_version%@*}")" = "${pkg_version#*@}" ] ||
    die "@modelcontextprotocol/${pkg_version%@*} is not at ${pkg_version#*@} after install"
done
# The Apps servers' engines floor is node 20: they run on the machine's node.
APP_NODE="$(command -v node)"

# ---------------------------------------------------------------- smoke checks
# Each npm server must answer a legacy initialize on this node (catches "needs a newer node").
# A few lines of node: spawn, send initialize, wait for the first stdout line, kill.
SMOKE_JS='
const { spawn } = require("child_process");
const [label, ...cmd] = process.argv.slice(1);
const child = spawn(process.execPath, cmd, { stdio: ["pipe", "pipe", "pipe"] });
let out = "", err = "";
const fail = (why) => { console.error(`${label}: ${why}\n${err.slice(-2000)}`); child.kill("SIGKILL"); process.exit(1); };
const timer = setTimeout(() => fail("no answer to initialize within 20s"), 20000);
child.stderr.on("data", (d) => { err += d; });
child.on("exit", (code) => fail(`exited early with code ${code}`));
child.stdout.on("data", (d) => {
  out += d;
  const nl = out.indexOf("\n");
  if (nl < 0) return;
  let msg = null;
  try { msg = JSON.parse(out.slice(0, nl)); } catch (e) { /* reported below */ }
  if (!msg || !msg.result || !msg.result.protocolVersion) fail(`bad answer: ${out.slice(0, nl)}`);
  clearTimeout(timer); child.removeAllListeners("exit"); child.kill(); process.exit(0);
});
child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: {
  protocolVersion: "2025-11-25", capabilities: { roots: { listChanged: true } },
  clientInfo: { name: "install-peers", version: "0" } } }) + "\n");
'
if [ "${PEERS_SKIP_SMOKE:-0}" != 1 ]; then
  node -e "$SMOKE_JS" server-everything "$EVERYTHING_JS" stdio &
  p1=$!
  # No directory arguments: the filesystem server then takes its allowed directories from the roots.
  node -e "$SMOKE_JS" server-filesystem "$FILESYSTEM_JS" &
  p2=$!
  "$APP_NODE" -e "$SMOKE_JS" server-basic-vanillajs "$APP_BASIC_JS" --stdio &
  p3=$!
  "$APP_NODE" -e "$SMOKE_JS" server-budget-allocator "$APP_BUDGET_JS" --stdio &
  p4=$!
  "$APP_NODE" -e "$SMOKE_JS" server-pdf "$APP_PDF_JS" --stdio &
  p5=$!
  ok=1
  for p in "$p1" "$p2" "$p3" "$p4" "$p5"; do wait "$p" || ok=0; done
  [ "$ok" = 1 ] || die "smoke check failed: a server does not start on node $(node --version)"
fi

# ---------------------------------------------------------------- env.sh
cat >"$PEERS/env.sh.tmp" <<EOF
# Generated by scripts/install-peers.sh; source it: . .cache/peers/env.sh
export MCP_PEERS_DIR='$PEERS'
export MCP_EVERYTHING_JS='$EVERYTHING_JS'
export MCP_FILESYSTEM_JS='$FILESYSTEM_JS'
export MCP_PYTHON='$VENV/bin/python'
export MCP_PEERS_NODE_MODULES='$NODE_DIR/node_modules'
export MCP_INSPECTOR_JS='$INSPECTOR_JS'
export MCP_NODE24='$NODE24_DIR/bin/node'
export MCP_APP_BASIC_JS='$APP_BASIC_JS'
export MCP_APP_BUDGET_JS='$APP_BUDGET_JS'
export MCP_APP_PDF_JS='$APP_PDF_JS'
export MCP_APP_NODE='$APP_NODE'
EOF
mv "$PEERS/env.sh.tmp" "$PEERS/env.sh"

echo "peers ready in $((SECONDS - START))s: server-everything@$EVERYTHING_VERSION + server-filesystem@$FILESYSTEM_VERSION + sdk@$TS_SDK_VERSION + server-basic-vanillajs@$APP_BASIC_VERSION + server-budget-allocator@$APP_BUDGET_VERSION + server-pdf@$APP_PDF_VERSION ($npm_status, node $(node --version)), inspector@$INSPECTOR_VERSION ($inspector_status, node $("$NODE24_DIR/bin/node" --version)), $PY_PINS ($py_status, $("$VENV/bin/python" --version 2>&1)); source $PEERS/env.sh"
