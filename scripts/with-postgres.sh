#!/usr/bin/env bash
# Run a command beside a throwaway PostgreSQL cluster, then stop the cluster and delete it.
#
#   bash scripts/with-postgres.sh cargo test -p cairn-cli --test cli team
#
# The cluster lives in a temp dir: data, a Unix socket, and a TCP listener on 127.0.0.1 only, on
# a free port. Its one superuser, `cairn_admin`, has a random password (SCRAM); nothing else can
# log in. The command gets:
#   CAIRN_TEST_PG_ADMIN_URL  postgres://cairn_admin:…@127.0.0.1:PORT/postgres (tests create their
#                            own databases and roles through it; they fail without it)
# The server comes from Debian's `postgresql` package (scripts/setup.sh installs it): initdb,
# pg_ctl and postgres on PATH or under /usr/lib/postgresql/<version>/bin. As root (CI), the
# cluster runs as the `postgres` user the package creates, since PostgreSQL refuses to run as root.
set -euo pipefail

say() { printf 'with-postgres: %s\n' "$*" >&2; }
die() { printf 'with-postgres: %s\n' "$*" >&2; exit 1; }

[ $# -gt 0 ] || die "usage: scripts/with-postgres.sh COMMAND [ARGS…]"

bindir=""
if command -v initdb >/dev/null && command -v pg_ctl >/dev/null; then
  bindir="$(dirname "$(command -v pg_ctl)")"
else
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then bindir="$d"; break; fi
  done
fi
[ -n "$bindir" ] || die "initdb/pg_ctl not found: install Debian's postgresql package (bash scripts/setup.sh does)"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/cairn-pg.XXXXXX")"
as_owner=()
if [ "$(id -u)" -eq 0 ]; then
  id postgres >/dev/null 2>&1 || die "running as root needs the postgres user (Debian's postgresql package creates it)"
  chown postgres "$tmp"
  as_owner=(runuser -u postgres --)
fi

stop() {
  "${as_owner[@]}" "$bindir/pg_ctl" -D "$tmp/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap stop EXIT
trap 'exit 130' INT TERM

password="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
printf '%s\n' "$password" > "$tmp/pw"
[ "$(id -u)" -ne 0 ] || chown postgres "$tmp/pw"
"${as_owner[@]}" "$bindir/initdb" -D "$tmp/data" -U cairn_admin --pwfile="$tmp/pw" \
  --auth=scram-sha-256 --encoding=UTF8 --no-locale --no-sync >"$tmp/initdb.log" 2>&1 \
  || { cat "$tmp/initdb.log" >&2; die "initdb failed"; }
rm -f "$tmp/pw"

# A free port: ask the kernel for one, then start on it; another process may take it in between,
# so a failed start tries again with a new one.
started=""
for _ in 1 2 3 4 5; do
  port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
  if "${as_owner[@]}" "$bindir/pg_ctl" -D "$tmp/data" -l "$tmp/server.log" -w -t 30 \
      -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$tmp -c fsync=off -c max_connections=100" \
      start >/dev/null 2>&1; then
    started=1
    break
  fi
done
[ -n "$started" ] || { cat "$tmp/server.log" >&2; die "the throwaway PostgreSQL did not start"; }
say "PostgreSQL $("$bindir/postgres" --version | awk '{print $3}') on 127.0.0.1:$port (data in $tmp)"

export CAIRN_TEST_PG_ADMIN_URL="postgres://cairn_admin:$password@127.0.0.1:$port/postgres"
status=0
"$@" || status=$?
exit "$status"
