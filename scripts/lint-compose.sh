#!/bin/sh
# Lint the docker-compose deployment of gateflow without a Docker engine:
#   1. `docker-compose config -q` validates docker-compose.yml (schema, interpolation,
#      depends_on conditions) with Debian's docker-compose package (the Python v1 tool;
#      `config` does not talk to a Docker engine);
#   2. the files the compose file mounts or builds from exist, and the shell scripts parse;
#   3. every gateflow search attribute (DESIGN.md, "Mapping onto Temporal") is registered,
#      with its type, by deploy/setup-namespace.sh.
# Installs nothing: CI installs the package (apt-get install -y docker-compose).
#
# Usage: scripts/lint-compose.sh            (from anywhere; paths are relative to the repo)
# Exit status: 0 all checks pass, 1 a check failed, 2 docker-compose is not installed.
set -eu

ROOT=$(CDPATH='' cd -- "$(dirname -- "$0")/.." && pwd)
cd "$ROOT"

COMPOSE_FILE_PATH=docker-compose.yml
SETUP_SCRIPT=deploy/setup-namespace.sh

# NAME:TYPE of gateflow's search attributes; keep in step with DESIGN.md.
SEARCH_ATTRIBUTES='
FlowStatus:Keyword
FlowCategory:Keyword
FlowCreatedBy:Keyword
FlowVersion:Keyword
FlowWaiting:KeywordList
FlowLabels:KeywordList
FlowCostUSD:Double
FlowMaxCostUSD:Double
FlowPriority:Int
'

failures=0
fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}
ok() { echo "ok:   $*"; }

if ! command -v docker-compose >/dev/null 2>&1; then
	echo "lint-compose: docker-compose not found on PATH." >&2
	echo "lint-compose: install Debian's docker-compose package: apt-get update && apt-get install -y docker-compose" >&2
	exit 2
fi
echo "lint-compose: $(docker-compose version --short 2>/dev/null || echo 'docker-compose (version unknown)') in $ROOT"

# 1. The compose file itself, without COMPOSE_* overrides from the caller's environment,
# so that what is checked is the file as committed.
unset COMPOSE_FILE COMPOSE_PROJECT_NAME COMPOSE_PATH_SEPARATOR
if [ ! -f "$COMPOSE_FILE_PATH" ]; then
	fail "$COMPOSE_FILE_PATH is missing"
elif out=$(docker-compose --project-directory "$ROOT" -f "$COMPOSE_FILE_PATH" config -q 2>&1); then
	ok "docker-compose -f $COMPOSE_FILE_PATH config -q"
	if services=$(docker-compose --project-directory "$ROOT" -f "$COMPOSE_FILE_PATH" config --services 2>/dev/null); then
		echo "      services: $(printf '%s\n' "$services" | tr '\n' ' ')"
		for s in postgresql temporal-admin-tools temporal temporal-setup temporal-ui flow-worker; do
			printf '%s\n' "$services" | grep -qx -- "$s" || fail "$COMPOSE_FILE_PATH has no service '$s'"
		done
	fi
else
	fail "docker-compose -f $COMPOSE_FILE_PATH config -q:"
	printf '%s\n' "$out" | sed 's/^/      /' >&2
fi

# 2. Files the compose file refers to, and shell syntax.
for f in Dockerfile .dockerignore deploy/dynamicconfig/development-sql.yaml "$SETUP_SCRIPT"; do
	if [ -f "$f" ]; then ok "exists: $f"; else fail "missing: $f"; fi
done
if [ -f "$SETUP_SCRIPT" ]; then
	# The admin-tools image runs it with busybox sh: check it as POSIX sh.
	if out=$(sh -n "$SETUP_SCRIPT" 2>&1); then ok "sh -n $SETUP_SCRIPT"; else fail "sh -n $SETUP_SCRIPT: $out"; fi
fi

# 3. Search attributes: each NAME:TYPE must be a line of its own in the setup script's list.
if [ -f "$SETUP_SCRIPT" ]; then
	missing=''
	for entry in $SEARCH_ATTRIBUTES; do
		grep -Eq "^[[:space:]]*${entry}[[:space:]]*\$" "$SETUP_SCRIPT" || missing="$missing $entry"
	done
	count=$(printf '%s\n' $SEARCH_ATTRIBUTES | grep -c .)
	if [ -z "$missing" ]; then
		ok "$SETUP_SCRIPT registers all $count gateflow search attributes: $(printf '%s ' $SEARCH_ATTRIBUTES)"
	else
		fail "$SETUP_SCRIPT does not register (NAME:TYPE):$missing"
	fi
fi

if [ "$failures" -gt 0 ]; then
	echo "lint-compose: $failures check(s) failed" >&2
	exit 1
fi
echo "lint-compose: all checks passed"
