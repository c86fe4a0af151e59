#!/usr/bin/env bash
# The checks of scripts/lib/tier-checks.sh on fake tiers, in a temporary HOME and checkout: a
# clean tier passes; one that writes to the sidecar's state or config directory, or leaves a
# process behind (also one with a cleared environment), fails naming it, and the process is
# stopped; a process of the person's started before the tier is left alone. Run by the lint tier.
set -uo pipefail
LIB="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/tier-checks.sh"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/tier-checks-test.XXXXXX")"
person=
# Whatever still runs from this test's own temporary directory (when a check under test missed it).
trap '[ -z "$person" ] || kill "$person" 2>/dev/null; pgrep -f -- "$TMP/" | xargs -r kill 2>/dev/null; rm -rf "$TMP"' EXIT
mkdir -p "$TMP/home/.local/state/mcp-sidecar" "$TMP/checkout"
echo '{}' >"$TMP/home/.local/state/mcp-sidecar/sampling.jsonl"
failures=0

# case name, expected exit (0 or 1), the tier's command, then strings its output must hold
case_() {
  local name=$1 want=$2 command=$3 out rc needle
  shift 3
  out=$(cd "$TMP/checkout" && HOME="$TMP/home" XDG_STATE_HOME='' XDG_CONFIG_HOME='' bash -c '
    . "$1"; run_tier fake 20 "$2"' _ "$LIB" "$command" 2>&1)
  rc=$?
  [ "$rc" -gt 1 ] && rc=1
  local ok=1
  [ "$rc" = "$want" ] || ok=0
  for needle in "$@"; do [[ "$out" == *"$needle"* ]] || ok=0; done
  if [ $ok = 1 ]; then
    echo "ok   $name"
  else
    failures=$((failures + 1))
    echo "FAIL $name: exit $rc (want $want), output:"
    printf '%s\n' "$out" | sed 's/^/    /'
  fi
}

# A process of the person's, started before the tier, with the checkout on its command line.
bash -c 'exec -a "$0" sleep 600' "$TMP/checkout/editor" &
person=$!
# The check counts a process started in the clock tick the tier starts in as the tier's: wait for
# the tick the person's process started in to pass.
person_start=$(awk '{ print $22 }' "/proc/$person/stat")
until [ "$(awk '{ print $22 }' /proc/self/stat)" -gt "$person_start" ]; do :; done

case_ 'a clean tier passes' 0 'echo done'
case_ 'a write to the state directory fails, naming the file' 1 \
  'echo "{}" >>"$HOME/.local/state/mcp-sidecar/sampling.jsonl"' \
  "wrote to the person's own directories" 'sampling.jsonl f 3 bytes' 'sampling.jsonl f 6 bytes'
case_ 'a new config directory fails' 1 'mkdir -p "$HOME/.config/mcp-sidecar"' '.config/mcp-sidecar absent'
# What a tier leaves: a shell that says it is up on fifo $1, then waits (it starts nothing more,
# so the check never meets it in the middle of an exec), with its name in $0.
mkfifo "$TMP/up"
LEFT='bash -c '\''echo up >"$1"; while :; do read -r -t 1 <>"$1" || :; done'\'
case_ 'a process left running fails, naming it' 1 \
  "$LEFT left-601 \"$TMP/up\" </dev/null >/dev/null 2>&1 & read -r <\"$TMP/up\"" \
  'left processes running' "left-601 $TMP/up"
case_ 'a detached one with a cleared environment too' 1 \
  "env -i setsid $LEFT \"\$PWD/server-602\" \"$TMP/up\" </dev/null >/dev/null 2>&1 & read -r <\"$TMP/up\"" \
  "$TMP/checkout/server-602 $TMP/up"
for n in left-601 server-602; do
  if pgrep -f "$n $TMP/up" >/dev/null; then
    failures=$((failures + 1))
    echo "FAIL the process left by the tier ($n) was not stopped"
  fi
done
if kill -0 "$person" 2>/dev/null; then
  echo "ok   the person's own process was left alone"
else
  failures=$((failures + 1))
  echo "FAIL the person's own process was stopped"
fi
[ $failures = 0 ]
