#!/usr/bin/env bash
# Instructions and simulated cache misses of one small `callTool`, for the sidecar and for the
# minimal LSP relay (benches/compare/lsp_relay.rs), under `valgrind --tool=callgrind
# --cache-sim=yes`. Each is driven by the event-loop client (benches/peers/lsp_client.mjs) for
# 1 000 and then 3 000 calls; the difference over 2 000 leaves start-up out.
#
# Why (docs/log/benchmarks.md, issue 18's tenth and eleventh rounds): on this kind of machine a small
# call's latency over the relay follows its L1 instruction-cache misses over the relay's (about
# 11-15 ns a miss), not its instruction count; and these counts do not depend on the machine's
# load, unlike any timing. Budget a hot-path change by them.
#
#   scripts/cachesim.sh                   the tree's release build (built here if needed)
#   SIDECAR=PATH scripts/cachesim.sh      another sidecar binary (the relay stays the tree's)
#
# Needs valgrind (Debian's package: installed here when missing), node and socat (the client's
# other paths: scripts/install-socat.sh). Prints one line per binary; takes a few minutes.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

log() { printf '[cachesim] %s\n' "$*" >&2; }
# shellcheck source=lib/debian-packages.sh
. scripts/lib/debian-packages.sh
install_missing valgrind
command -v socat >/dev/null || { log "error: socat is not on PATH (scripts/install-socat.sh)"; exit 1; }
command -v node >/dev/null || { log "error: node is not on PATH"; exit 1; }

# The bench binary is the relay (BENCH_ROLE=lsp-relay); building it builds the sidecar too.
bench=$(cargo bench --locked --bench sidecar --no-run --message-format=json 2>/dev/null |
  python3 -c 'import json, sys
exes = [m["executable"] for m in map(json.loads, sys.stdin)
        if m.get("reason") == "compiler-artifact" and m.get("executable")
        and m["target"]["name"] == "sidecar"]
print(exes[-1])') || {
  log "error: building the bench failed (cargo bench --bench sidecar --no-run shows why)"
  exit 1
}
sidecar=$(realpath "${SIDECAR:-target/release/mcp-sidecar}")
[ -x "$sidecar" ] || { log "error: no sidecar binary at $sidecar"; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/home"
# The sidecar under valgrind when started as the sidecar (no arguments); as the demo server it
# runs plain. The relay under valgrind always (its server is the sidecar binary, plain).
cat >"$work/sidecar" <<EOF
#!/bin/sh
if [ \$# -eq 0 ]; then
  exec valgrind --tool=callgrind --cache-sim=yes --callgrind-out-file="$work/sidecar.\$CALLS.%p" "$sidecar"
fi
exec "$sidecar" "\$@"
EOF
cat >"$work/relay" <<EOF
#!/bin/sh
exec valgrind --tool=callgrind --cache-sim=yes --callgrind-out-file="$work/relay.\$CALLS.%p" "$bench" "\$@"
EOF
chmod +x "$work/sidecar" "$work/relay"

for calls in 1000 3000; do
  log "$calls calls each (valgrind is slow: a minute or two)"
  CALLS=$calls node benches/peers/lsp_client.mjs --bin "$work/sidecar" --home "$work/home" \
    --calls "$calls" --warmup 100 --relay "$work/relay" >/dev/null
done

python3 - "$work" <<'EOF'
import glob, sys
work = sys.argv[1]

def summary(name, calls):
    [path] = glob.glob(f"{work}/{name}.{calls}.*")
    events = summary_line = None
    for line in open(path):
        if line.startswith("events:"):
            events = line.split()[1:]
        elif line.startswith("summary:"):
            summary_line = [int(x) for x in line.split()[1:]]
    return dict(zip(events, summary_line))

for name, label in (("sidecar", "sidecar"), ("relay", "minimal LSP relay")):
    a, b = summary(name, 1000), summary(name, 3000)
    per = {k: (b[k] - a[k]) / 2000 for k in a}
    print(f"{label}: per call {per['Ir']:,.0f} instructions, {per['I1mr']:,.0f} L1i misses, "
          f"{per['D1mr']:,.0f} + {per['D1mw']:,.0f} L1d misses (read + write)")
EOF
