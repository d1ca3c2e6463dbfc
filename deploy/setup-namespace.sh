#!/bin/sh
# One-shot cluster setup for gateflow, run by the `temporal-setup` service of
# docker-compose.yml (image temporalio/admin-tools, which ships the `temporal` CLI and a
# busybox /bin/sh; keep this script POSIX sh, no bash).
#
#   1. wait until the Temporal frontend answers `temporal operator cluster health`,
#   2. create the namespace if it does not exist,
#   3. register gateflow's custom search attributes if they are missing,
#   4. check that all of them are listed.
#
# Safe to run again: existing namespaces and attributes are left alone. An attribute that
# exists with a different type is an error (fix it by hand; gateflow needs these types).
# The same registration is done by `flowctl setup` on clusters without this compose file.
#
# Settings (environment):
#   TEMPORAL_ADDRESS        frontend host:port                 (default temporal:7233)
#   NAMESPACE               namespace to prepare               (default default)
#   NAMESPACE_RETENTION     retention of closed runs on create (default 72h)
#   SETUP_MAX_ATTEMPTS      attempts per step before giving up (default 60)
#   SETUP_RETRY_DELAY       seconds between attempts           (default 2)
#   SETUP_COMMAND_TIMEOUT   seconds allowed per CLI call       (default 15)
set -eu
set -f # no globbing: the attribute list below is split on whitespace

TEMPORAL_ADDRESS="${TEMPORAL_ADDRESS:-temporal:7233}"
NAMESPACE="${NAMESPACE:-default}"
NAMESPACE_RETENTION="${NAMESPACE_RETENTION:-72h}"
SETUP_MAX_ATTEMPTS="${SETUP_MAX_ATTEMPTS:-60}"
SETUP_RETRY_DELAY="${SETUP_RETRY_DELAY:-2}"
SETUP_COMMAND_TIMEOUT="${SETUP_COMMAND_TIMEOUT:-15}"

# gateflow's search attributes, NAME:TYPE, one per line (DESIGN.md, "Mapping onto
# Temporal"). They fit SQL visibility's per-namespace limits (10 Keyword, 3 of each other
# type). scripts/lint-compose.sh checks that every one of them is listed here.
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

log() { printf '%s setup-namespace: %s\n' "$(date -u +%H:%M:%S)" "$*"; }
die() {
	printf '%s setup-namespace: ERROR: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2
	exit 1
}

for v in SETUP_MAX_ATTEMPTS SETUP_RETRY_DELAY SETUP_COMMAND_TIMEOUT; do
	eval "val=\$$v"
	case $val in
	'' | *[!0-9]*) die "$v must be a whole number of attempts/seconds, got '$val'" ;;
	esac
done
[ "$SETUP_MAX_ATTEMPTS" -gt 0 ] || die "SETUP_MAX_ATTEMPTS must be at least 1"
command -v temporal >/dev/null 2>&1 || die "the 'temporal' CLI is not on PATH (use the temporalio/admin-tools image)"

# tcli ARGS...: the temporal CLI against our cluster, bounded by SETUP_COMMAND_TIMEOUT
# when a `timeout` command exists (busybox has one), so a hung connection cannot stall
# the setup forever.
tcli() {
	if command -v timeout >/dev/null 2>&1; then
		timeout "$SETUP_COMMAND_TIMEOUT" temporal "$@" --address "$TEMPORAL_ADDRESS"
	else
		temporal "$@" --address "$TEMPORAL_ADDRESS"
	fi
}

# 1. Wait for the frontend.
log "waiting for Temporal at $TEMPORAL_ADDRESS (up to $SETUP_MAX_ATTEMPTS attempts, ${SETUP_RETRY_DELAY}s apart)"
attempt=1
until out=$(tcli operator cluster health 2>&1); do
	if [ "$attempt" -ge "$SETUP_MAX_ATTEMPTS" ]; then
		die "Temporal at $TEMPORAL_ADDRESS is not healthy after $attempt attempts; last answer: $out"
	fi
	log "not healthy yet (attempt $attempt/$SETUP_MAX_ATTEMPTS): $(printf '%s' "$out" | tail -n 1)"
	attempt=$((attempt + 1))
	sleep "$SETUP_RETRY_DELAY"
done
log "Temporal is healthy: $(printf '%s' "$out" | tail -n 1)"

# 2. Create the namespace if missing. describe can fail for reasons other than "not
# found", so a failing describe leads to create, and create's "already exists" is fine.
attempt=1
while :; do
	if tcli operator namespace describe --namespace "$NAMESPACE" >/dev/null 2>&1; then
		log "namespace '$NAMESPACE' exists"
		break
	fi
	if out=$(tcli operator namespace create --namespace "$NAMESPACE" --retention "$NAMESPACE_RETENTION" 2>&1); then
		log "namespace '$NAMESPACE' created (retention $NAMESPACE_RETENTION)"
		break
	fi
	case $out in
	*"already exists"* | *AlreadyExists* | *"already registered"*)
		log "namespace '$NAMESPACE' already exists"
		break
		;;
	esac
	if [ "$attempt" -ge "$SETUP_MAX_ATTEMPTS" ]; then
		die "could not create namespace '$NAMESPACE' after $attempt attempts; last answer: $out"
	fi
	log "namespace '$NAMESPACE' not ready (attempt $attempt/$SETUP_MAX_ATTEMPTS): $(printf '%s' "$out" | tail -n 1)"
	attempt=$((attempt + 1))
	sleep "$SETUP_RETRY_DELAY"
done

# list_attributes: the namespace's search attributes (system and custom) as a table.
list_attributes() {
	tcli operator search-attribute list --namespace "$NAMESPACE" 2>&1
}

# has_attribute NAME LISTING: NAME appears as a whole word in LISTING.
has_attribute() {
	printf '%s\n' "$2" | grep -qw -- "$1"
}

# 3. Register the missing search attributes. A freshly created namespace can take a few
# seconds to be visible to every frontend, hence the retries.
before=$(list_attributes) || before=''
added=0
present=0
for entry in $SEARCH_ATTRIBUTES; do
	name=${entry%%:*}
	type=${entry#*:}
	attempt=1
	while :; do
		if out=$(tcli operator search-attribute create --namespace "$NAMESPACE" --name "$name" --type "$type" 2>&1); then
			# The server skips attributes that already exist with the same type.
			if has_attribute "$name" "$before"; then
				log "search attribute $name ($type): already registered"
				present=$((present + 1))
			else
				log "search attribute $name ($type): registered"
				added=$((added + 1))
			fi
			break
		fi
		case $out in
		*"different type"*)
			die "search attribute $name already exists in namespace '$NAMESPACE' with another type than $type; gateflow needs $type. Answer: $out"
			;;
		*"already exists"* | *AlreadyExists*)
			log "search attribute $name ($type): already registered"
			present=$((present + 1))
			break
			;;
		*"cannot have more than"* | *"unsupported search attribute type"* | *"is reserved"*)
			die "search attribute $name ($type) cannot be registered: $out"
			;;
		esac
		if [ "$attempt" -ge "$SETUP_MAX_ATTEMPTS" ]; then
			die "could not register search attribute $name ($type) after $attempt attempts; last answer: $out"
		fi
		log "search attribute $name ($type): not yet (attempt $attempt/$SETUP_MAX_ATTEMPTS): $(printf '%s' "$out" | tail -n 1)"
		attempt=$((attempt + 1))
		sleep "$SETUP_RETRY_DELAY"
	done
done

# 4. Verify.
after=$(list_attributes) || die "could not list search attributes of namespace '$NAMESPACE': $after"
missing=''
for entry in $SEARCH_ATTRIBUTES; do
	name=${entry%%:*}
	has_attribute "$name" "$after" || missing="$missing $name"
done
[ -z "$missing" ] || die "search attributes missing after setup in namespace '$NAMESPACE':$missing"

log "done: namespace '$NAMESPACE' on $TEMPORAL_ADDRESS has all gateflow search attributes ($added added, $present already there)"
