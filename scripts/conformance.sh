#!/usr/bin/env bash
# The official MCP conformance suite (npm @modelcontextprotocol/conformance, pinned) against
# `mcp-sidecar conformance`, the headless client mode, for both requirement sets.
#
#   scripts/conformance.sh          every client scenario each requirement set requires, plus the
#                                   client scenarios the suite added after the release and its
#                                   client extension scenarios (forced: the suite does not score
#                                   them), minus the ones in conformance/expected-failures.yml; prints the
#                                   count per set and fails on any failure. This is what CI runs.
#   scripts/conformance.sh --all    each whole requirement set with the expected-failures baseline
#                                   (runs the listed ones too; stale entries fail the run).
#   SCENARIOS="tools_call sse-retry" scripts/conformance.sh   only these (in every set that has them)
#
# The default run also runs the suite's server scenarios listed in GATEWAY_SCENARIOS against the
# gateway (the agents' face): scripts/gateway-host.mjs starts a sidecar with a scripted editor and
# the demo server and puts a loopback proxy that adds the gateway's secret in front of it (the
# suite's server mode cannot send headers); conformance/gateway-expected-failures.yml is their
# baseline, check by check. GATEWAY=0 skips them; SCENARIOS selects among them too.
#
# MCP_SIDECAR_BIN picks the binary (default: a fresh debug build). Results (checks.json, the
# client's stdout/stderr per scenario) go to .cache/conformance/results/.
set -euo pipefail

CONFORMANCE_VERSION=0.2.0-alpha.12
REQUIREMENT_SETS=(2025-11-25 2026-07-28)
# The server scenarios the gateway is held to: the ones that need no particular tools (the
# others call the suite's own test_* tools, and its tasks-* scenarios the fixture tools greet,
# slow_compute, failing_job, ..., which only the suite's reference server has), and the Skills
# ones (the demo's skills, through the gateway).
GATEWAY_SCENARIOS=(server-initialize server-session-lifecycle ping tools-list dns-rebinding-protection
  server-stateless http-header-validation caching server-sse-polling server-sse-multiple-streams
  sep-2640-skills-enumeration sep-2640-skills-manifest sep-2640-skills-directory)

# Client scenarios no requirement set lists (the suite registers them under no revision) that the
# project holds itself to as if required: the Skills extension's (SEP-2640).
PROJECT_REQUIRED=(sep-2640-client-no-prefetch sep-2640-client-verify-digest sep-2640-client-verify-size
  sep-2640-client-verify-frontmatter)

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="$ROOT/.cache/conformance"
BASELINE="$ROOT/conformance/expected-failures.yml"
GATEWAY_BASELINE="$ROOT/conformance/gateway-expected-failures.yml"
RESULTS="$CACHE/results"
START=$SECONDS

log() { printf '[conformance] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# ---------------------------------------------------------------- install (Node 24 + the suite)
NODE_DIR="$("$ROOT/scripts/install-node.sh")"
export PATH="$NODE_DIR/bin:$PATH"
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
SUITE="$CACHE/node_modules/.bin/conformance"
installed="$(node -p 'require(process.argv[1]).version' \
  "$CACHE/node_modules/@modelcontextprotocol/conformance/package.json" 2>/dev/null || true)"
if [ "$installed" != "$CONFORMANCE_VERSION" ]; then
  log "npm: installing @modelcontextprotocol/conformance@$CONFORMANCE_VERSION"
  mkdir -p "$CACHE"
  [ -f "$CACHE/package.json" ] || printf '{\n  "name": "mcp-sidecar-conformance",\n  "private": true\n}\n' >"$CACHE/package.json"
  npm install --prefix "$CACHE" --no-audit --no-fund --loglevel=error --save-exact \
    "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" >&2
fi
[ -x "$SUITE" ] || die "the conformance suite did not install ($SUITE missing)"

# ---------------------------------------------------------------- the client under test
if [ -z "${MCP_SIDECAR_BIN:-}" ]; then
  (cd "$ROOT" && cargo build --locked --quiet)
  MCP_SIDECAR_BIN="$ROOT/target/debug/mcp-sidecar"
fi
[ -x "$MCP_SIDECAR_BIN" ] || die "$MCP_SIDECAR_BIN is not executable"
# The suite splits the command on spaces and appends the server URL.
CLIENT="$MCP_SIDECAR_BIN conformance --log-level info"

# ---------------------------------------------------------------- scenario lists
expected() { sed -n 's/^ *- *\([^ #]*\).*/\1/p' "$BASELINE"; }
# Client scenarios a set requires, the client ones it lists as added after its release, and its
# (unscored) client extension scenarios, which the suite runs only when forced.
scenarios() { # $1 = requirement set, $2 = required|added|extension|project
  if [ "$2" = project ]; then
    printf '%s\n' "${PROJECT_REQUIRED[@]}"
    return
  fi
  "$SUITE" list --client --requirements "$1" 2>&1 | awk -v want="$2" '
    /^Client scenarios/ { section = "required"; next }
    /^Run and reported/ { section = "unscored"; next }
    /^  added-after-release/ { sub_ = "added"; next }
    /^  extension/ { sub_ = "extension"; next }
    /^  [a-z-]+ \([0-9]+\):/ { sub_ = ""; next }
    section == "required" && want == "required" && /^  - / { print $2 }
    section == "unscored" && sub_ == want && want != "required" && /\[client\]/ { print $2 }'
}
selected() { [ -z "${SCENARIOS:-}" ] || [[ " $SCENARIOS " == *" $1 "* ]]; }

if [ "${1:-}" = "--all" ]; then
  status=0
  for set in "${REQUIREMENT_SETS[@]}"; do
    log "requirement set $set, whole, baseline $BASELINE"
    "$SUITE" client --command "$CLIENT" --requirements "$set" --expected-failures "$BASELINE" \
      -o "$RESULTS/all-$set" || status=1
  done
  exit $status
fi

mapfile -t skip < <(expected)
summary=()
failed=()
for set in "${REQUIREMENT_SETS[@]}"; do
  passed=0 ran=0 skipped=0 extra_passed=0 extra_ran=0 ext_passed=0 ext_ran=0 proj_passed=0 proj_ran=0
  for kind in required added extension project; do
    force=()
    case $kind in extension | project) force=(--force) ;; esac
    while read -r scenario; do
      [ -n "$scenario" ] || continue
      if [[ " ${skip[*]} " == *" $scenario "* ]]; then
        skipped=$((skipped + 1))
        continue
      fi
      selected "$scenario" || continue
      out="$RESULTS/$set/$scenario"
      rm -rf "$out" && mkdir -p "$out"
      t0=$SECONDS
      if "$SUITE" client --command "$CLIENT" --scenario "$scenario" --spec-version "$set" \
        "${force[@]}" --timeout 30000 -o "$out" >"$out/suite.log" 2>&1 &&
        grep -q "OVERALL: PASSED" "$out/suite.log"; then
        verdict=passed
        case $kind in
          required) passed=$((passed + 1)) ;;
          added) extra_passed=$((extra_passed + 1)) ;;
          extension) ext_passed=$((ext_passed + 1)) ;;
          project) proj_passed=$((proj_passed + 1)) ;;
        esac
      else
        verdict=FAILED
        failed+=("$set $scenario")
        sed 's/\x1b\[[0-9;]*m//g' "$out/suite.log" | grep -E "FAILURE|WARNING|Error|exited|timed out" | head -20 >&2 || true
      fi
      case $kind in
        required) ran=$((ran + 1)) ;;
        added) extra_ran=$((extra_ran + 1)) ;;
        extension) ext_ran=$((ext_ran + 1)) ;;
        project) proj_ran=$((proj_ran + 1)) ;;
      esac
      checks="$(sed 's/\x1b\[[0-9;]*m//g' "$out/suite.log" | sed -n 's/^Passed: \([0-9]*\/[0-9]*\).*/\1/p' | tail -1)"
      printf '  %-10s %-40s %-7s %s checks, %ss\n' "$set" "$scenario" "$verdict" "${checks:-?}" "$((SECONDS - t0))"
    done < <(scenarios "$set" "$kind")
  done
  summary+=("$set: $passed/$ran required client scenarios passed, plus $extra_passed/$extra_ran added after the release and $ext_passed/$ext_ran unscored extensions and $proj_passed/$proj_ran the project requires (Skills); $skipped in conformance/expected-failures.yml, not run")
done

# ---------------------------------------------------------------- the gateway (server scenarios)
if [ "${GATEWAY:-1}" != 0 ]; then
  mkdir -p "$RESULTS/gateway"
  coproc HOST { exec node "$ROOT/scripts/gateway-host.mjs" "$MCP_SIDECAR_BIN" 2>"$RESULTS/gateway/host.log"; }
  host_pid=$HOST_PID
  trap 'kill "$host_pid" 2>/dev/null || true' EXIT
  ready=
  read -r -t 90 ready <&"${HOST[0]}" || true
  url="$(printf '%s' "$ready" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{try{console.log(JSON.parse(s).url)}catch{}})')"
  [ -n "$url" ] || die "the gateway host did not start: $(tail -5 "$RESULTS/gateway/host.log")"
  gw_passed=0 gw_ran=0
  for scenario in "${GATEWAY_SCENARIOS[@]}"; do
    selected "$scenario" || continue
    out="$RESULTS/gateway/$scenario"
    rm -rf "$out" && mkdir -p "$out"
    t0=$SECONDS
    if "$SUITE" server --url "$url" --scenario "$scenario" --expected-failures "$GATEWAY_BASELINE" \
      --timeout 30000 -o "$out" >"$out/suite.log" 2>&1; then
      verdict=passed
      gw_passed=$((gw_passed + 1))
    else
      verdict=FAILED
      failed+=("gateway $scenario")
      sed 's/\x1b\[[0-9;]*m//g' "$out/suite.log" | grep -E "FAILURE|WARNING|✗|stale|Error" | head -20 >&2 || true
    fi
    gw_ran=$((gw_ran + 1))
    checks="$(sed 's/\x1b\[[0-9;]*m//g' "$out/suite.log" | sed -n 's/^Passed: \([0-9]*\/[0-9]*\).*/\1/p' | tail -1)"
    printf '  %-10s %-40s %-7s %s checks, %ss\n' gateway "$scenario" "$verdict" "${checks:-?}" "$((SECONDS - t0))"
  done
  host_in=${HOST[1]}
  exec {host_in}>&- # the host shuts the sidecar down when its stdin closes
  wait "$host_pid" 2>/dev/null || true
  trap - EXIT
  summary+=("gateway: $gw_passed/$gw_ran server scenarios passed against the gateway (expected failures, check by check: conformance/gateway-expected-failures.yml)")
fi

echo "conformance @modelcontextprotocol/conformance@$CONFORMANCE_VERSION, $(basename "$MCP_SIDECAR_BIN") conformance, $((SECONDS - START))s:"
printf '  %s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  printf '  FAILED: %s\n' "${failed[@]}"
  exit 1
fi
