#!/usr/bin/env bash
# Benchmarks (report, never gate): release build, then benches/sidecar.rs.
#   BENCH_CALLS=2000 scripts/bench.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo bench --bench sidecar "$@"
