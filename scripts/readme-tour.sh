#!/usr/bin/env bash
# readme-tour.sh: the README tour check alone (make test runs it too): builds bin/ and runs
# TestReadmeTour, which replays every console block of README.md and of docs/*.md against
# a fresh `flow-worker --dev` and fails when the real output no longer matches the file's.
set -euo pipefail
cd "$(dirname "$0")/.."
make build
GATEFLOW_BIN_DIR="$PWD/bin" go test -count=1 -timeout 30m -v -run '^TestReadmeTour$' ./internal/integration
