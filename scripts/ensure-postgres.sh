#!/usr/bin/env bash
# Installs what `make test-cluster` needs besides Go: PostgreSQL's server programs
# (initdb, postgres, pg_isready), with apt (Debian's postgresql package) when missing.
# The tests start their own server from them (internal/clustertest), as the postgres
# user when run as root; nothing else of the package is used.
set -eu

if [ -n "${PG_BIN:-}" ] && [ -x "$PG_BIN/initdb" ]; then
  exit 0
fi
for d in /usr/lib/postgresql/*/bin; do
  if [ -x "$d/initdb" ] && [ -x "$d/postgres" ] && [ -x "$d/pg_isready" ]; then
    exit 0
  fi
done
if command -v initdb >/dev/null 2>&1; then
  exit 0
fi

. "$(dirname "$0")/apt-install.sh"
apt_install ensure-postgres "the cluster tests' database" \
  "install PostgreSQL and set PG_BIN to the directory of initdb, postgres and pg_isready" postgresql
ls -d /usr/lib/postgresql/*/bin/initdb
