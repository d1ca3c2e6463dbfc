# gateflow — the two commands that matter:
#   make run    the worker with an embedded Temporal server, the Web UI and the example flows
#   make test   everything CI checks: formatting, vet, the compose file, unit, integration
#               and end-to-end tests (against a real embedded Temporal server)

GO       ?= go
BIN      := $(CURDIR)/bin
RUN_ARGS ?=
# The Temporal server is heavy to link: keep at most two test binaries building at once.
TEST_FLAGS ?= -p 2 -count=1 -timeout 30m

export GOFLAGS ?= -buildvcs=false

.PHONY: all run build build-cluster test test-cluster unit lint fmt compose-lint tools bench fuzz soak clean

all: build

## build: the flow-worker and flowctl binaries in ./bin, example-worker (examples/worker: a worker of your own flows) and triage-tools (examples/mcp/triage-tools: the example MCP server)
build:
	$(GO) build -o $(BIN)/flow-worker ./cmd/flow-worker
	$(GO) build -o $(BIN)/flowctl ./cmd/flowctl
	$(GO) build -o $(BIN)/example-worker ./examples/worker
	$(GO) build -o $(BIN)/triage-tools ./examples/mcp/triage-tools

## build-cluster: build, plus temporal-pg (the Temporal server on PostgreSQL the cluster tests run)
build-cluster: build
	$(GO) build -o $(BIN)/temporal-pg ./internal/devserver/cluster/cmd/temporal-pg

## run: flow-worker --dev (server on :7233, Web UI on :8233, example flows, the example MCP server triage-tools); RUN_ARGS="--db-file gateflow.db" keeps runs
run: build
	$(BIN)/flow-worker --dev --mcp "triage-tools='$(BIN)/triage-tools'" $(RUN_ARGS)

## test: lint, the compose file, then every test; the e2e and Web UI tests use the binaries just built
test: lint compose-lint build
	GATEFLOW_BIN_DIR=$(BIN) $(GO) test $(TEST_FLAGS) ./...

## test-cluster: a real cluster with faults injected: PostgreSQL (installed with apt when missing), the Temporal server on it, three flow-worker processes, flowctl; SIGKILL loop, server and PostgreSQL restarts, a partitioned worker (internal/clustertest)
test-cluster: build-cluster
	@bash scripts/ensure-postgres.sh
	GATEFLOW_BIN_DIR=$(BIN) $(GO) test -tags cluster -count=1 -p 1 -timeout 30m -v ./internal/clustertest

## unit: the tests that need no Temporal server (fast)
unit:
	$(GO) test -count=1 $$($(GO) list ./... | grep -v /internal/integration)

## fuzz: every Go fuzz target for FUZZTIME each (default 5s), found by scripts/fuzz.sh; not those of packages that link the Temporal server
FUZZTIME ?= 5s
fuzz:
	FUZZTIME=$(FUZZTIME) GO=$(GO) bash scripts/fuzz.sh

## lint: gofmt, go vet and flowvet (determinism of flow handlers, see analyzer/doc.go)
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run ./cmd/flowvet ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

## compose-lint: docker-compose.yml is valid (Debian's docker-compose; `make tools` installs it)
compose-lint: tools
	bash scripts/lint-compose.sh

## tools: install what the tests need besides Go: docker-compose (the compose lint), chromium (the Web UI tests, driven by chromedp)
tools:
	@bash scripts/ensure-tools.sh

clean:
	rm -rf $(BIN)

## bench: gateflow against the raw Temporal SDK on one embedded server, one markdown table (BENCH_ROUNDS 3, BENCH_RUNS 100, BENCH_STEPS 1,5,20,100, BENCH_CONCURRENCY 50, BENCH_APPROVALS 50, BENCH_HELD 1000, BENCH_PROFILE_DIR); about 12-20 min on 2 cores
bench:
	$(GO) test -count=1 -run '^$$' -bench GateflowVsRawSDK -benchtime 1x -timeout 60m ./internal/integration

## soak: SOAK_RUNS (1000) runs waiting on gates across SOAK_WORKERS (3) worker processes for SOAK_DURATION (10m), with random votes, signals, cancellations and worker restarts (SOAK_SEED); prints its figures; not part of make test
SOAK_TIMEOUT ?= 90m
soak: build
	GATEFLOW_BIN_DIR=$(BIN) $(GO) test -tags soak -count=1 -v -run '^TestSoak$$' -timeout $(SOAK_TIMEOUT) ./internal/integration
