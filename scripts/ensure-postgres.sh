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

if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-postgres: PostgreSQL's initdb is missing and this is not a Debian-like system;" >&2
  echo "ensure-postgres: install PostgreSQL and set PG_BIN to the directory of initdb, postgres and pg_isready" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "ensure-postgres: PostgreSQL is missing; run as root or install it: apt-get install postgresql" >&2
    exit 1
  fi
fi
echo "ensure-postgres: installing Debian's postgresql (the cluster tests' database)"
export DEBIAN_FRONTEND=noninteractive NEEDRESTART_SUSPEND=1
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends postgresql >/dev/null
ls -d /usr/lib/postgresql/*/bin/initdb
