#!/usr/bin/env bash
# Run a command inside a private D-Bus session bus that has a throwaway, unlocked GNOME Keyring
# (a real Secret Service), then stop both and delete the keyring.
#
#   bash scripts/with-keyring.sh cargo test -p cairn-cli --test cli keyring
#   bash scripts/with-postgres.sh bash scripts/with-keyring.sh cargo test …   (make test)
#
# The bus is dbus-run-session's (it ends with the command, and the daemon with it); the keyring
# lives in a temp dir (XDG_DATA_HOME of the daemon only: the command keeps its HOME, so cargo
# keeps its caches), created and unlocked with a random throwaway password. The person's own
# keyring is never reached: DBUS_SESSION_BUS_ADDRESS points at the private bus. The command gets:
#   CAIRN_TEST_KEYRING=1   a throwaway Secret Service is on this bus: tests may write to it (the
#                          keyring tests fail without it rather than touch a real keyring)
# Needs dbus-run-session (dbus-daemon), gnome-keyring-daemon and secret-tool (libsecret-tools, the
# tests' second client): scripts/setup.sh installs them.
set -euo pipefail

say() { printf 'with-keyring: %s\n' "$*" >&2; }
die() { printf 'with-keyring: %s\n' "$*" >&2; exit 1; }

[ $# -gt 0 ] || die "usage: scripts/with-keyring.sh COMMAND [ARGS…]"

if [ -z "${CAIRN_KEYRING_DIR:-}" ]; then
  for tool in dbus-run-session gnome-keyring-daemon secret-tool; do
    command -v "$tool" >/dev/null \
      || die "$tool not found: install dbus-daemon, gnome-keyring and libsecret-tools (bash scripts/setup.sh does)"
  done
  tmp="$(mktemp -d "${TMPDIR:-/tmp}/cairn-keyring.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  trap 'exit 130' INT TERM
  status=0
  CAIRN_KEYRING_DIR="$tmp" dbus-run-session -- bash "$0" "$@" || status=$?
  exit "$status"
fi

# Inside the private bus.
tmp="$CAIRN_KEYRING_DIR"
unset CAIRN_KEYRING_DIR
mkdir -p "$tmp/data" "$tmp/run"
chmod 700 "$tmp/run"
password="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
# --unlock reads the password on stdin, creates the login keyring with it (the default
# collection) and starts the daemon on this bus.
printf '%s' "$password" | XDG_DATA_HOME="$tmp/data" XDG_RUNTIME_DIR="$tmp/run" \
  gnome-keyring-daemon --unlock --components=secrets >"$tmp/daemon.env" 2>"$tmp/daemon.log" \
  || { cat "$tmp/daemon.log" >&2; die "gnome-keyring-daemon did not start"; }
unset password
ready=""
for _ in $(seq 1 50); do
  if dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
      org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q 'boolean true'; then
    ready=1
    break
  fi
  sleep 0.1
done
[ -n "$ready" ] || { cat "$tmp/daemon.log" >&2; die "the Secret Service did not appear on the private bus"; }
say "GNOME Keyring $(gnome-keyring-daemon --version 2>/dev/null | awk 'NR==1{print $2}') on a private D-Bus session (keyring in $tmp)"

export CAIRN_TEST_KEYRING=1
"$@"
