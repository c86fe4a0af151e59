#!/usr/bin/env bash
# Benchmarks (report, never gate): release build, then benches/sidecar.rs.
#   scripts/bench.sh                     full run (target/bench-sidecar.json)
#   BENCH_CALLS=2000 scripts/bench.sh    calls per latency series
#   BENCH_SMOKE=1 scripts/bench.sh       a handful of each series (target/bench-sidecar-smoke.json)
# The peer clients (Python SDK, TypeScript SDK) come from scripts/install-peers.sh; their
# environment is sourced here when present, otherwise those series are skipped.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ -z "${MCP_PYTHON:-}${MCP_PEERS_NODE_MODULES:-}" ] && [ -f .cache/peers/env.sh ]; then
  # shellcheck disable=SC1091
  . .cache/peers/env.sh
fi
[ -n "${MCP_PYTHON:-}" ] && [ -n "${MCP_PEERS_NODE_MODULES:-}" ] ||
  echo "bench: peers not installed (scripts/install-peers.sh): their series will be skipped" >&2
cargo bench --bench sidecar "$@"
