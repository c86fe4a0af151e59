# Sourced by scripts/test-all.sh: runs one tier and checks that it left the machine as it found
# it. A tier fails when, after it ran,
#   - the person's own sidecar directories changed (~/.config/mcp-sidecar, ~/.local/state/mcp-sidecar,
#     their $XDG_CONFIG_HOME / $XDG_STATE_HOME counterparts, Neovim's and Emacs's mcp-sidecar.log):
#     tests use temporary HOME/XDG directories;
#   - a process of the tier is still running: one carrying the tier's marker in its environment
#     (everything the tier starts inherits it, daemons included), or one started during the tier
#     with the checkout's path on its command line and no terminal (a child started with a cleared
#     environment). Each is named, then stopped (TERM, KILL after 5 s).
# Needs Linux's /proc and GNU find.

# The watched paths, one a line (each once).
watched_paths() {
  {
    printf '%s\n' "$HOME/.config/mcp-sidecar" "$HOME/.local/state/mcp-sidecar" "$HOME/.local/state/nvim/mcp-sidecar.log" \
      "$HOME/.emacs.d/mcp-sidecar.log" "$HOME/.config/emacs/mcp-sidecar.log"
    [ -z "${XDG_CONFIG_HOME:-}" ] || printf '%s\n' "$XDG_CONFIG_HOME/mcp-sidecar"
    [ -z "${XDG_STATE_HOME:-}" ] || printf '%s\n' "$XDG_STATE_HOME/mcp-sidecar" "$XDG_STATE_HOME/nvim/mcp-sidecar.log"
    [ -z "${XDG_CONFIG_HOME:-}" ] || printf '%s\n' "$XDG_CONFIG_HOME/emacs/mcp-sidecar.log"
  } | awk '!seen[$0]++'
}

# Every file under the watched paths with its type, size and modification time; "absent" for a
# path that does not exist.
home_snapshot() {
  local path
  while IFS= read -r path; do
    if [ -e "$path" ] || [ -L "$path" ]; then
      find "$path" -printf '%p %y %s bytes, modified %TF %TT\n' 2>/dev/null | LC_ALL=C sort
    else
      echo "$path absent"
    fi
  done < <(watched_paths)
}

# Field $2 (counted as in proc(5): 4 = ppid, 22 = start time) of /proc/$1/stat; fails when the
# process is gone.
proc_stat_field() {
  local stat field=$2
  read -r stat 2>/dev/null <"/proc/$1/stat" || return 1
  # shellcheck disable=SC2086
  set -- ${stat##*) } # the fields after the command name (which may hold spaces and parentheses)
  shift $((field - 3))
  echo "$1"
}

# Now, in clock ticks since boot as /proc/PID/stat's start times count them (awk's own start).
clock_tick() { awk '{ print $22 }' /proc/self/stat; }

# Whether process $1 is this script or one of its descendants (the check's own commands).
is_ours_running() {
  local pid=$1 n=0
  while [ "$pid" -gt 1 ] && [ $n -lt 64 ]; do
    [ "$pid" = "$$" ] && return 0
    pid=$(proc_stat_field "$pid" 4) || return 1
    n=$((n + 1))
  done
  return 1
}

# The pids (one a line) of the tier's processes still running: marker $1 in the environment, or
# started at or after clock tick $2 with checkout $3 (unless "") on the command line and no terminal.
tier_survivors() {
  local marker=$1 since=$2 root=$3 file pid start tty
  local -a found=()
  mapfile -t found < <(
    grep -lsxzF "$marker" /proc/[0-9]*/environ | sed 's|^/proc/\([0-9]*\)/environ$|\1 marked|'
    [ -z "$root" ] || grep -lszF "$root/" /proc/[0-9]*/cmdline | sed 's|^/proc/\([0-9]*\)/cmdline$|\1 path|'
  )
  for file in "${found[@]}"; do
    pid=${file% *}
    is_ours_running "$pid" && continue
    [ -r "/proc/$pid/stat" ] || continue
    if [ "${file#* }" = path ]; then
      start=$(proc_stat_field "$pid" 22) || continue
      tty=$(proc_stat_field "$pid" 7) || continue
      [ "$start" -ge "$since" ] && [ "$tty" = 0 ] || continue
    fi
    echo "$pid"
  done | sort -un
}

# Stops the processes $@: TERM, a bounded wait for them to exit, then KILL.
stop_processes() {
  local pid n=0 alive
  kill -TERM "$@" 2>/dev/null
  while [ $n -lt 50 ]; do
    alive=0
    for pid in "$@"; do
      [ -d "/proc/$pid" ] && [ "$(proc_stat_field "$pid" 3)" != Z ] && alive=1
    done
    [ $alive = 1 ] || return 0
    sleep 0.1
    n=$((n + 1))
  done
  kill -KILL "$@" 2>/dev/null
  return 0
}

# Runs tier $1 with budget $2 seconds: the command $3 in `bash -eo pipefail`, then the checks.
# Returns non-zero when the command failed, timed out, or a check failed (saying which).
run_tier() {
  local name=$1 budget=$2 command=$3 root before after since pid rc=0
  root=$(pwd -P)
  before=$(home_snapshot)
  since=$(clock_tick)
  local marker="MCP_SIDECAR_TEST_TIER=$name.$$.$RANDOM$RANDOM"
  # In the background with `wait`, so that an interrupt of this script reaches the tier too
  # (timeout puts it in a process group of its own, which the terminal's ^C does not reach).
  pid=
  trap '[ -z "$pid" ] || { kill -TERM "$pid"; wait "$pid"; } 2>/dev/null; trap - INT TERM; tier_cleanup "$name" "$marker" "$since" "$root"; exit 130' INT TERM
  # -e: a tier fails on its first failing command, not only on its last one.
  env "$marker" timeout --kill-after=10 "$budget" bash -eo pipefail -c "$command" &
  pid=$!
  wait "$pid" || rc=$?
  trap - INT TERM
  [ $rc = 0 ] || echo "=== tier $name: its command failed (exit $rc$([ $rc = 124 ] && echo ': over its budget'))" >&2
  tier_cleanup "$name" "$marker" "$since" "$root" || rc=1
  after=$(home_snapshot)
  if [ "$before" != "$after" ]; then
    echo "=== tier $name wrote to the person's own directories (tests must use temporary HOME/XDG dirs; or an editor of yours wrote there meanwhile):" >&2
    diff <(echo "$before") <(echo "$after") | sed -n 's/^</  before: /p; s/^>/  after:  /p' >&2
    rc=1
  fi
  return $rc
}

# Names (a line "  PID: command line" each) and stops the processes left running by what ran with
# marker $1 since clock tick $2 (see tier_survivors; checkout $3, or "" to go by the marker only).
# Fails when there were any.
stop_leftovers() {
  local pid pass rc=0
  local -a survivors=()
  # Two passes: a process in the middle of an exec shows no command line or environment for a moment.
  for pass in 1 2; do
    mapfile -t survivors < <(tier_survivors "$@")
    [ ${#survivors[@]} -gt 0 ] || continue
    for pid in "${survivors[@]}"; do
      echo "  $pid: $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-300)"
    done
    stop_processes "${survivors[@]}"
    rc=1
  done
  return $rc
}

# Names and stops the processes tier $1 left running; fails when there were any.
tier_cleanup() {
  local name=$1 left
  left=$(stop_leftovers "$2" "$3" "$4") && return 0
  echo "=== tier $name left processes running (stopped now):" >&2
  echo "$left" >&2
  return 1
}
