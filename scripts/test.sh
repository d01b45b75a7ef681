#!/usr/bin/env bash
# The whole test suite: unit and integration tests with the race detector,
# against a real ZooKeeper ensemble of three servers and a real Kafka 3.9
# broker, and a real Kafka 4 broker in KRaft mode (no ZooKeeper).
#
# With ZOOKEEPER_CONNECT and KAFKA_BROKERS set, the shared integration tests
# use that cluster (e.g. `docker compose up`); otherwise this script starts a
# local one for the run and stops it at the end. Likewise KRAFT_BROKERS names
# the shared KRaft cluster, or this script starts a one-node one. Tests that
# kill or pause processes always start private clusters of their own from
# the jars.
#
# The Prometheus adapter, plugin/prometheus, is a module of its own (so that
# the core module does not depend on client_golang); it is built, vetted
# and tested after the core, against the same cluster, and against the
# core of this working tree: the repository's go.work puts both in one
# workspace (its published go.mod requires a released core instead).
#
# Three test-only modules live outside the workspace (GOWORK=off), so that
# their dependencies stay out of the published modules' build lists:
# scripts/gettable checks that a user's module can `go get` the core and the
# plugin from published versions alone (it publishes this working tree into
# a local file-based module proxy and builds a program against it,
# offline); plugin/prometheus/monitoring/check checks the plugin's alerting
# rules, recording rules and Grafana dashboard with Prometheus's own rule
# parser and PromQL engine; both run before the cluster starts.
# scripts/exporters needs the cluster: it reads a group zkconsumer
# committed with kazoo-go, the library kafka_exporter's ZooKeeper lag reads
# groups with, as kafka_exporter does; it runs after the plugin's tests.
set -euo pipefail
cd "$(dirname "$0")/.."

testinfra/fetch-jars.sh
go build ./...
go vet ./...
(cd plugin/prometheus && go build ./... && go vet ./...)
(cd chaos && go build ./... && go vet ./...)
for m in scripts/gettable plugin/prometheus/monitoring/check; do
  (cd "$m" && GOWORK=off go vet ./... && GOWORK=off go test -count=1 ${GOTESTFLAGS:-} ./...)
done
(cd scripts/exporters && GOWORK=off go vet ./...)

state=.cache/test-cluster
kraft_state=.cache/test-kraft
# One trap stops whichever clusters this script started.
stop=()
trap 'for s in "${stop[@]}"; do go run ./internal/testrig/cmd/zkcluster -state "$s" down; done' EXIT
if [[ -z "${ZOOKEEPER_CONNECT:-}" ]]; then
  # A leftover from an interrupted run would block the start.
  go run ./internal/testrig/cmd/zkcluster -state "$state" down >/dev/null 2>&1 || true
  stop+=("$state")
  go run ./internal/testrig/cmd/zkcluster -state "$state" up -brokers 1 -zookeepers 3 >/dev/null
  set -a; source "$state/env"; set +a
fi
if [[ -z "${KRAFT_BROKERS:-}" ]]; then
  go run ./internal/testrig/cmd/zkcluster -state "$kraft_state" down >/dev/null 2>&1 || true
  stop+=("$kraft_state")
  go run ./internal/testrig/cmd/zkcluster -state "$kraft_state" up -kraft -brokers 1 >/dev/null
  set -a; source "$kraft_state/env"; set +a
fi
echo "test.sh: integration tests use ZOOKEEPER_CONNECT=$ZOOKEEPER_CONNECT KAFKA_BROKERS=$KAFKA_BROKERS KRAFT_BROKERS=$KRAFT_BROKERS"
go run ./internal/testrig/cmd/zkcluster info

# Tests that share a cluster safely call t.Parallel (connector: those that
# inject no fault into a cluster another test uses); they mostly wait on the
# cluster, so four at a time beside the packages go test runs side by side
# (-p, the number of CPUs) keep a 2-core machine busy without starving a
# session's heartbeats.
go test -race -count=1 -parallel 4 -timeout 40m ${GOTESTFLAGS:-} ./...
(cd plugin/prometheus && go test -race -count=1 -timeout 10m ${GOTESTFLAGS:-} ./...)
(cd chaos && go test -race -count=1 -timeout 10m ${GOTESTFLAGS:-} ./...)
(cd scripts/exporters && GOWORK=off go test -race -count=1 -timeout 5m ${GOTESTFLAGS:-} ./...)
