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
# The Prometheus adapter, plugin/prometheus, and the fault-injection suite,
# chaos/, are modules of their own (so that the core module does not
# depend on client_golang, and no importable package holds the chaos rig);
# they are built, vetted and tested with the core, against the same
# cluster, and against the core of this working tree: the repository's
# go.work puts them in one workspace (the plugin's published go.mod
# requires a released core instead).
#
# Three test-only modules live outside the workspace (GOWORK=off), so that
# their dependencies stay out of the published modules' build lists:
# scripts/gettable checks that a user's module can `go get` the core and the
# plugin from published versions alone (it publishes this working tree into
# a local file-based module proxy and builds a program against it,
# offline); plugin/prometheus/monitoring/check checks the plugin's alerting
# rules, recording rules and Grafana dashboard with Prometheus's own rule
# parser and PromQL engine; both run while the clusters start.
# scripts/exporters needs the cluster: it reads a group zkconsumer
# committed with kazoo-go, the library kafka_exporter's ZooKeeper lag reads
# groups with, as kafka_exporter does; it runs after the plugin's tests.
set -euo pipefail
cd "$(dirname "$0")/.."

testinfra/fetch-jars.sh
go build -o .cache/zkcluster ./internal/testrig/cmd/zkcluster
zkcluster=.cache/zkcluster

# The clusters start in the background while the modules are built, vetted
# and the offline checks run; one trap stops whichever clusters this
# script started, once their start has ended.
state=.cache/test-cluster
kraft_state=.cache/test-kraft
stop=()
starting=()
trap 'wait "${starting[@]}" 2>/dev/null; for s in "${stop[@]}"; do "$zkcluster" -state "$s" down; done' EXIT
start_cluster() { # state dir, then zkcluster up's flags
  local s=$1
  shift
  # A leftover from an interrupted run would block the start.
  "$zkcluster" -state "$s" down >/dev/null 2>&1 || true
  stop+=("$s")
  "$zkcluster" -state "$s" up "$@" >"$s.log" 2>&1 &
  starting+=($!)
}
mkdir -p .cache
if [[ -z "${ZOOKEEPER_CONNECT:-}" ]]; then
  start_cluster "$state" -brokers 1 -zookeepers 3
fi
if [[ -z "${KRAFT_BROKERS:-}" ]]; then
  start_cluster "$kraft_state" -kraft -brokers 1
fi

go build ./...
go vet ./...
(cd plugin/prometheus && go build ./... && go vet ./...)
(cd chaos && go build ./... && go vet ./...)
for m in scripts/gettable plugin/prometheus/monitoring/check; do
  (cd "$m" && GOWORK=off go vet ./... && GOWORK=off go test -count=1 ${GOTESTFLAGS:-} ./...)
done
(cd scripts/exporters && GOWORK=off go vet ./...)

for pid in "${starting[@]}"; do
  if ! wait "$pid"; then
    cat "$state.log" "$kraft_state.log" 2>/dev/null >&2
    echo "test.sh: a test cluster did not start" >&2
    exit 1
  fi
done
starting=()
if [[ -z "${ZOOKEEPER_CONNECT:-}" ]]; then
  set -a; source "$state/env"; set +a
fi
if [[ -z "${KRAFT_BROKERS:-}" ]]; then
  set -a; source "$kraft_state/env"; set +a
fi
echo "test.sh: integration tests use ZOOKEEPER_CONNECT=$ZOOKEEPER_CONNECT KAFKA_BROKERS=$KAFKA_BROKERS KRAFT_BROKERS=$KRAFT_BROKERS"
"$zkcluster" info

# One go test for the core and the two workspace modules built against it
# (chaos, plugin/prometheus), so that their packages share the lanes go
# test runs side by side (-p, the number of CPUs) instead of running after
# the core's. go test starts packages in the order given: the longest come
# first, so that no long one starts last and runs alone at the end.
#
# Tests that share a cluster safely call t.Parallel (those that inject no
# fault into a cluster another test uses); they mostly wait on the
# cluster, so four at a time per package keep a 2-core machine busy
# without starving a session's heartbeats.
longest_first=(./connector ./internal/fetch ./cmd/zkconsumer-console-consumer ./internal/testrig/testcluster
  ./internal/kafkagroup ./internal/zksession ./chaos/... ./cmd/zkconsumer-groups ./internal/zkgroup)
go test -race -count=1 -parallel 4 -timeout 40m ${GOTESTFLAGS:-} "${longest_first[@]}" ./... ./plugin/prometheus/...
(cd scripts/exporters && GOWORK=off go test -race -count=1 -timeout 5m ${GOTESTFLAGS:-} ./...)
