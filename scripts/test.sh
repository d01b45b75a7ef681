#!/usr/bin/env bash
# The whole test suite: unit and integration tests with the race detector,
# against a real ZooKeeper and a real Kafka 3.9 broker.
#
# With ZOOKEEPER_CONNECT and KAFKA_BROKERS set, the shared integration tests
# use that cluster (e.g. `docker compose up`); otherwise this script starts a
# local one for the run and stops it at the end. Tests that kill or pause
# processes always start private clusters of their own from the jars.
#
# The Prometheus adapter, plugin/prometheus, is a module of its own (so that
# the core module does not depend on client_golang); it is built, vetted
# and tested after the core, against the same cluster.
set -euo pipefail
cd "$(dirname "$0")/.."

testinfra/fetch-jars.sh
go build ./...
go vet ./...
(cd plugin/prometheus && go build ./... && go vet ./...)

state=.cache/test-cluster
if [[ -z "${ZOOKEEPER_CONNECT:-}" ]]; then
  # A leftover from an interrupted run would block the start.
  go run ./internal/cmd/zkcluster -state "$state" down >/dev/null 2>&1 || true
  trap 'go run ./internal/cmd/zkcluster -state "$state" down' EXIT
  go run ./internal/cmd/zkcluster -state "$state" up -brokers 1 >/dev/null
  set -a; source "$state/env"; set +a
fi
echo "test.sh: integration tests use ZOOKEEPER_CONNECT=$ZOOKEEPER_CONNECT KAFKA_BROKERS=$KAFKA_BROKERS"
go run ./internal/cmd/zkcluster info

go test -race -count=1 -timeout 40m ${GOTESTFLAGS:-} ./...
(cd plugin/prometheus && go test -race -count=1 -timeout 10m ${GOTESTFLAGS:-} ./...)
