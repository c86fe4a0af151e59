#!/usr/bin/env bash
# Every test of the project, tier by tier, each under its own time budget.
# This is the README's test command, and exactly what CI runs (.ci/run).
#   scripts/test-all.sh            all tiers
#   TIERS="lint unit" scripts/test-all.sh   only some (lint, peers, unit, interop, apps, conformance, nvim, emacs, vscode)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

TIERS="${TIERS:-lint peers unit interop apps conformance nvim emacs vscode}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
# Two cores: keep test threads modest so timing-sensitive tests are not starved.
export RUST_TEST_THREADS="${RUST_TEST_THREADS:-2}"

# shellcheck source=scripts/lib/tier-checks.sh
. scripts/lib/tier-checks.sh

tier() { # name, budget in seconds, command...
  local name=$1 budget=$2; shift 2
  local start=$SECONDS
  echo "=== tier $name (budget ${budget}s)"
  # The command, then the checks: nothing written to the person's own sidecar directories, no
  # process of the tier left running (scripts/lib/tier-checks.sh).
  if ! run_tier "$name" "$budget" "$*"; then
    echo "=== tier $name FAILED after $((SECONDS - start))s" >&2
    exit 1
  fi
  echo "=== tier $name passed in $((SECONDS - start))s"
}

has() { [[ " $TIERS " == *" $1 "* ]]; }

lint() {
  # The declared rust-version is the toolchain CI builds with: when the machine's rustc moves on,
  # this fails until Cargo.toml's rust-version names it (no rust-toolchain.toml, so people who
  # build the plugin with a newer stable are not made to download an older one).
  local declared actual
  declared=$(sed -n 's/^rust-version = "\(.*\)"$/\1/p' Cargo.toml)
  actual=$(rustc --version | cut -d' ' -f2)
  if [[ "$actual" != "$declared" && "$actual" != "$declared".* ]]; then
    echo "lint: rustc $actual is not the declared rust-version $declared (raise rust-version in Cargo.toml to the toolchain CI builds with)" >&2
    return 1
  fi
  cargo fmt --check
  cargo clippy --all-targets --locked -- -D warnings
  # The fuzz targets are their own workspace, which nothing else builds: type-checked here on
  # stable (fuzzing itself needs nightly: scripts/fuzz.sh), so a renamed API cannot leave them
  # broken unseen, as it once did for two rounds.
  cargo check --manifest-path fuzz/Cargo.toml --locked --bins
  # The views' host bundle (src/apps/assets/host.js) is what its pinned sources build, and
  # host.ts type-checks.
  editors/apps/build.sh --check
  # The checks every tier ends with (scripts/lib/tier-checks.sh), on fake tiers.
  scripts/lib/tier-checks-test.sh
}

unit() {
  # Unit tests, and the one integration-test binary (tests/it: in-process LSP over duplex,
  # contract docs, black-box, faults, load); the interop tier below runs its ignored tests
  # that need third-party peers. Every test keeps to temporary home, config and state folders
  # (the check after each tier fails when the person's own ones changed).
  cargo test --locked --all-targets
}

interop() {
  # shellcheck disable=SC1091
  . .cache/peers/env.sh
  # Runs the interop and HTTP suites (every test, ignored ones included) and the demo-server tests
  # the matrix cites, writes target/interop-matrix.md; fails on a failed or vanished test, and
  # when the committed docs/interop-matrix.md differs (`scripts/interop-matrix.py --write`).
  scripts/interop-matrix.py
  # The fixtures themselves, checked against the Python SDK's own client in both eras.
  "$MCP_PYTHON" fixtures/python/check_fixtures.py
  # The benchmarks' smoke run with the SDK peers (a handful of each series; reports, never
  # gates on timings, but fails on a wrong, lost or misrouted answer). Its event-loop series
  # needs socat (Debian's package; installed under CI=true, else skipped with a line saying so).
  if ! command -v socat >/dev/null && [ "${CI:-}" = true ]; then scripts/install-socat.sh; fi
  cargo test --locked --bench sidecar
  # The gateway benchmark's smoke run (the TypeScript SDK agent direct, over HTTP and over the
  # stdio bridge; fails on a lost, failed or crossed answer).
  cargo test --locked --bench gateway
  # Sign-in grants in a real Secret Service (gnome-keyring in a D-Bus session of its own).
  scripts/keyring-test.sh
}

apps() {
  # MCP Apps through the loopback page in headless Chromium (Debian's): the built sidecar driven
  # by a scripted editor without openApp, three real Apps servers and a hostile one.
  cargo build --locked
  # shellcheck disable=SC1091
  . .cache/peers/env.sh
  (cd tests/apps && npm ci --no-audit --no-fund --loglevel=error)
  # Debian's chromium (the vscode tier's browser too), installed when missing.
  if [ -z "${CHROMIUM:-}" ] && [ ! -x /usr/bin/chromium ]; then
    log() { printf '[apps] %s\n' "$*" >&2; }
    # shellcheck source=scripts/lib/debian-packages.sh
    . scripts/lib/debian-packages.sh
    install_missing chromium
  fi
  MCP_SIDECAR_BIN="$PWD/target/debug/mcp-sidecar" node tests/apps/run.mjs
  # The host bundle's own check: the page and the bridge against a real app, with a fake sidecar.
  editors/apps/build.sh --check
  node editors/apps/test/smoke.mjs
}

conformance() {
  # The official MCP conformance suite (pinned, on Node 24) against `mcp-sidecar conformance`:
  # every required client scenario (OAuth sign-in included) of the 2025-11-25 and 2026-07-28 requirement sets.
  cargo build --locked
  MCP_SIDECAR_BIN="$PWD/target/debug/mcp-sidecar" scripts/conformance.sh
}

nvim() {
  # Neovim 0.11 from PyPI, the real plugin, the built sidecar; Lua linters (stylua, selene).
  cargo build --locked
  editors/nvim/test/lint.sh
  MCP_SIDECAR_BIN="$PWD/target/debug/mcp-sidecar" editors/nvim/test/run.sh
}

emacs_tier() {
  # Emacs 28 (Debian's emacs-nox, with elpa-eglot and elpa-lsp-mode beside it), the real
  # package, the built sidecar; every file byte-compiled with warnings as errors, and checkdoc.
  cargo build --locked
  local emacs
  emacs=$(scripts/install-emacs.sh)
  "$emacs" -Q --batch -l editors/emacs/test/lint.el
  EMACS="$emacs" MCP_SIDECAR_BIN="$PWD/target/debug/mcp-sidecar" editors/emacs/test/run.sh
}

vscode() {
  # Real VS Code (code-server) with the packaged VSIX, driven by headless Chromium. The VSIX for
  # the test run carries this debug binary (run.sh packages MCP_SIDECAR_BIN; no binaryPath is
  # set); `npm run package` on its own bundles the release build.
  cargo build --locked
  MCP_SIDECAR_BIN="$PWD/target/debug/mcp-sidecar" editors/vscode/test/run.sh
}

export -f lint unit interop apps conformance nvim emacs_tier vscode
has lint && tier lint 900 lint
has peers && tier peers 900 scripts/install-peers.sh
has unit && tier unit 1200 unit
has interop && tier interop 900 interop
has apps && tier apps 600 apps
has conformance && tier conformance 600 conformance
has nvim && tier nvim 1500 nvim
has emacs && tier emacs 300 emacs_tier
has vscode && tier vscode 900 vscode
echo "=== all tiers passed in ${SECONDS}s"
