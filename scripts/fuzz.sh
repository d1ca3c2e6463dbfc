#!/usr/bin/env bash
# make fuzz: runs every Go fuzz target (func FuzzXxx in a _test.go file) for FUZZTIME each
# (default 5s), one at a time, each with its seed corpus in testdata/fuzz/FuzzXxx. Targets
# are found in the source, so a new one is never forgotten. Each package's instrumented
# test binary is built once for all its targets. Packages whose test binary links the
# Temporal server are skipped (an instrumented build of them takes minutes): their targets
# run as seed tests in `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-5s}
module=$($GO list -m)
cache=$($GO env GOCACHE)/fuzz
bindir=$(mktemp -d)
trap 'rm -rf "$bindir"' EXIT
start=$SECONDS
ran=0
skipped=()
failed=()

# fuzz_one PKGDIR BINARY TARGET IMPORTPATH: one target, from the package's directory (where
# its testdata/fuzz corpus is). Go's fuzz coordinator now and then gives up with "context
# deadline exceeded" on a loaded machine without any failing input; that is retried once.
fuzz_one() {
	local dir=$1 bin=$2 target=$3 path=$4 out
	for try in 1 2; do
		if out=$(cd "$dir" && "$bin" -test.run '^$' -test.fuzz "^${target}\$" -test.fuzztime "$FUZZTIME" \
			-test.fuzzcachedir "$cache/$path" 2>&1); then
			echo "$out" | tail -n 2 | head -n 1
			return 0
		fi
		if [ "$try" = 1 ] && grep -q 'context deadline exceeded' <<<"$out" && ! grep -q 'Failing input written' <<<"$out"; then
			echo "   (fuzz coordinator timed out without a failing input; again)"
			continue
		fi
		echo "$out"
		return 1
	done
}

for dir in $(grep -rl --include='*_test.go' -E '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' . | xargs -n1 dirname | sort -u); do
	rel=${dir#./}
	path=$module/$rel
	deps=$($GO list -test -deps "./$rel")
	if grep -q '^go.temporal.io/server/' <<<"$deps"; then
		skipped+=("./$rel")
		continue
	fi
	targets=$(grep -h -o -E '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' "$dir"/*_test.go | sed -E 's/^func (Fuzz[A-Za-z0-9_]*).*/\1/' | sort -u)
	bin=$bindir/$(echo "$rel" | tr / _).test
	$GO test -c -fuzz "^($(echo $targets | tr ' ' '|'))\$" -o "$bin" "./$rel"
	for target in $targets; do
		echo "== ./$rel $target ($FUZZTIME)"
		if ! fuzz_one "$root/$rel" "$bin" "$target" "$path"; then
			failed+=("./$rel $target")
		fi
		ran=$((ran + 1))
	done
done
echo "fuzz: $ran targets for $FUZZTIME each in $((SECONDS - start))s"
if [ ${#skipped[@]} -gt 0 ]; then
	echo "fuzz: skipped (their test binary links the Temporal server; their seeds run in make test): ${skipped[*]}"
fi
if [ ${#failed[@]} -gt 0 ]; then
	printf 'fuzz: FAILED %s (the failing input is in its testdata/fuzz directory)\n' "${failed[@]}"
	exit 1
fi
