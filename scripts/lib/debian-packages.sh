# Sourced by the scripts that install Debian packages (install-keyring.sh, install-socat.sh);
# they define `log` first. Debian's packages as apt gives them; idempotent; no interactive input,
# safe with CI=true; root (or sudo) is needed only to install.

installed() { # $1 = package; prints its installed version or nothing
  dpkg-query -W -f='${db:Status-Status} ${Version}\n' "$1" 2>/dev/null | sed -n 's/^installed //p'
}

install_missing() { # $@ = packages; installs those not installed yet
  local missing=() p
  for p in "$@"; do
    [ -n "$(installed "$p")" ] || missing+=("$p")
  done
  [ ${#missing[@]} -gt 0 ] || return 0
  command -v apt-get >/dev/null || { log "error: ${missing[*]} missing and there is no apt-get"; exit 1; }
  local as_root=()
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || { log "error: ${missing[*]} missing; installing needs root or sudo"; exit 1; }
    as_root=(sudo -n)
  fi
  log "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # A fresh container has no package lists yet.
  if ! apt-cache show "${missing[0]}" >/dev/null 2>&1; then
    "${as_root[@]}" apt-get update -qq
  fi
  "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}
