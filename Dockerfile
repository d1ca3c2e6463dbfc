# gateflow worker image: flow-worker (entrypoint) and flowctl.
#
#   docker build -t gateflow/flow-worker .
#   docker run --rm -e TEMPORAL_ADDRESS=temporal:7233 -e TEMPORAL_NAMESPACE=default \
#       gateflow/flow-worker --task-queue gateflow
#   docker run --rm --entrypoint flowctl gateflow/flow-worker --help
#
# flow-worker links the embedded Temporal dev server (for --dev), so a cold build takes
# several minutes and ~2.5 GB of memory; the module download is its own cached layer.

# ---- build ---------------------------------------------------------------------------
FROM golang:1.26.8-bookworm AS build

WORKDIR /src
# Static binaries (the embedded SQLite is pure Go), built with exactly the pinned toolchain.
ENV CGO_ENABLED=0 \
    GOTOOLCHAIN=local

COPY go.mod go.sum ./
RUN go mod download

COPY . .
RUN go build -trimpath -ldflags "-s -w" -o /out/flow-worker ./cmd/flow-worker \
 && go build -trimpath -ldflags "-s -w" -o /out/flowctl ./cmd/flowctl

# ---- runtime -------------------------------------------------------------------------
FROM debian:bookworm-slim

# ca-certificates: TLS to Temporal Cloud and to the HTTP / LLM endpoints that steps call.
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 gateflow \
 && useradd --system --uid 10001 --gid gateflow --create-home --home-dir /home/gateflow \
        --shell /usr/sbin/nologin gateflow

COPY --from=build /out/flow-worker /out/flowctl /usr/local/bin/

# Numeric so that runAsNonRoot-style checks can verify it without /etc/passwd.
USER 10001:10001
WORKDIR /home/gateflow

# Without --dev the worker connects to TEMPORAL_ADDRESS / TEMPORAL_NAMESPACE
# (defaults localhost:7233 / default). With --dev: 7233 frontend, 8233 Web UI.
EXPOSE 7233 8233
ENTRYPOINT ["/usr/local/bin/flow-worker"]
