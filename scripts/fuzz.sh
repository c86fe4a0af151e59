#!/usr/bin/env bash
# Runs the cargo-fuzz targets in fuzz/ (libFuzzer), each for FUZZ_SECONDS (default 60), and prints
# executions, exec/s and findings per target. Not part of scripts/test-all.sh (it needs a nightly
# toolchain and takes minutes); see docs/fuzzing.md.
#
#   scripts/fuzz.sh                       # every target, 60 s each
#   FUZZ_SECONDS=600 scripts/fuzz.sh stdio_line variables
#
# Environment: FUZZ_SECONDS (per target), FUZZ_TOOLCHAIN (default nightly), FUZZ_SANITIZER
# (cargo fuzz -s: address (default), none, ...), FUZZ_JOBS (parallel libFuzzer jobs per target,
# default 1). The corpus grows in fuzz/corpus/<target> (git-ignored), seeded from
# fuzz/seeds/<target>; a crash is saved in fuzz/artifacts/<target>/ and makes the script fail.
set -euo pipefail

cd "$(dirname "$0")/.."
SECONDS_EACH="${FUZZ_SECONDS:-60}"
TOOLCHAIN="${FUZZ_TOOLCHAIN:-nightly}"
SANITIZER="${FUZZ_SANITIZER:-address}"
JOBS="${FUZZ_JOBS:-1}"

if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "cargo-fuzz is not installed: cargo install cargo-fuzz --locked" >&2
  exit 2
fi
if ! rustup run "$TOOLCHAIN" rustc --version >/dev/null 2>&1; then
  echo "the $TOOLCHAIN toolchain is missing: rustup toolchain install $TOOLCHAIN" >&2
  exit 2
fi

if [ "$#" -gt 0 ]; then
  targets=("$@")
else
  mapfile -t targets < <(cargo "+$TOOLCHAIN" fuzz list)
fi

echo "building the fuzz targets (sanitizer: $SANITIZER)..." >&2
cargo "+$TOOLCHAIN" fuzz build -s "$SANITIZER" >&2

logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
failed=()
summary=()
for target in "${targets[@]}"; do
  mkdir -p "fuzz/corpus/$target" "fuzz/seeds/$target"
  echo "== $target: ${SECONDS_EACH} s" >&2
  status=0
  cargo "+$TOOLCHAIN" fuzz run -s "$SANITIZER" "$target" \
    "fuzz/corpus/$target" "fuzz/seeds/$target" -- \
    -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
    -dict=fuzz/dicts/json.dict -jobs="$JOBS" -workers="$JOBS" \
    -print_final_stats=1 >"$logs/$target.log" 2>&1 || status=$?
  # With -jobs > 1 libFuzzer writes each job's output to fuzz-<n>.log in the working directory.
  cat fuzz-[0-9]*.log >>"$logs/$target.log" 2>/dev/null && rm -f fuzz-[0-9]*.log
  execs=$(grep -h '^stat::number_of_executed_units' "$logs/$target.log" | awk '{s += $2} END {print s + 0}')
  rate=$(grep -h '^stat::average_exec_per_sec' "$logs/$target.log" | awk '{s += $2} END {print s + 0}')
  units=$(grep -h '^stat::new_units_added' "$logs/$target.log" | awk '{s += $2} END {print s + 0}')
  corpus=$(find "fuzz/corpus/$target" -type f | wc -l)
  if [ "$status" -ne 0 ]; then
    failed+=("$target")
    finding="FOUND SOMETHING (exit $status); see below"
  else
    finding="nothing found"
  fi
  summary+=("$(printf '%-18s %12s execs %8s exec/s %6s new units %6s corpus  %s' \
    "$target" "$execs" "$rate" "$units" "$corpus" "$finding")")
  echo "${summary[-1]}" >&2
  if [ "$status" -ne 0 ]; then
    grep -E 'panicked|ERROR|SUMMARY|Test unit written|artifact_prefix|Failing input' "$logs/$target.log" | head -20 >&2 || true
    tail -40 "$logs/$target.log" >&2
  fi
done

echo
echo "fuzzing summary (${SECONDS_EACH} s per target, $JOBS job(s), sanitizer $SANITIZER):"
printf '%s\n' "${summary[@]}"
if [ "${#failed[@]}" -gt 0 ]; then
  echo "findings in: ${failed[*]} (inputs in fuzz/artifacts/<target>/; reproduce with" \
    "cargo +$TOOLCHAIN fuzz run <target> <file>)" >&2
  exit 1
fi
