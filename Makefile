# zkconsumer developer commands. See CONTRIBUTING.md.
GO      ?= go
BROKERS ?= 1
# ZOOKEEPERS: ZooKeeper servers of cluster-up's ZooKeeper-mode cluster (3 or
# 5 for an ensemble, 1 for a single server).
ZOOKEEPERS ?= 3
# KRAFT=1: cluster-up/cluster-down act on a Kafka 4 cluster in KRaft mode (no
# ZooKeeper), kept apart from the ZooKeeper one (state in .cache/kraft-cluster).
KRAFT   ?=
kraft_flag = $(if $(filter 1 yes true,$(KRAFT)),-kraft)

.PHONY: all jars cluster-up cluster-down demo test test-short test-matrix fuzz bench chaos fmt vet

all: test

## jars: resolve Kafka 3.9, Kafka 4.x and Kafka 1.1.1 tool jars from Maven Central into .cache/
jars:
	@testinfra/fetch-jars.sh

## cluster-up: start a ZooKeeper ensemble of $(ZOOKEEPERS) servers + $(BROKERS) Kafka broker(s) in the background; KRAFT=1: $(BROKERS) Kafka 4 KRaft node(s)
cluster-up: jars
	@$(GO) run ./internal/testrig/cmd/zkcluster up $(kraft_flag) -brokers $(BROKERS) -zookeepers $(ZOOKEEPERS)

## cluster-down: stop the cluster started by cluster-up and remove its data (KRAFT=1: the KRaft one)
cluster-down:
	@$(GO) run ./internal/testrig/cmd/zkcluster down $(kraft_flag)

## demo: the main job, end to end against a local cluster
demo: jars
	@$(GO) run ./examples/demo

## test: every unit and integration test, with -race, against a real cluster
test:
	@scripts/test.sh

## test-short: unit tests only (skips everything that needs a cluster)
test-short:
	@$(GO) test -race -short ./...
	@cd plugin/prometheus && $(GO) test -race -short ./...
	@cd chaos && $(GO) test -race -short ./...
	@cd scripts/gettable && GOWORK=off $(GO) test -short ./...
	@cd plugin/prometheus/monitoring/check && GOWORK=off $(GO) test -short ./...
	@cd scripts/exporters && GOWORK=off $(GO) test -race -short ./...

## fuzz: run each fuzz target of FUZZ_PKGS (default ./internal/fetch/; ./... for all) for FUZZTIME (default 30s), one after the other; make test runs only their seed corpora. FUZZFLAGS=-race works too, about ten times slower
FUZZ_PKGS ?= ./internal/fetch/
FUZZTIME  ?= 30s
FUZZFLAGS ?=
fuzz:
	@for pkg in $$($(GO) list $(FUZZ_PKGS)); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "fuzz: $$pkg $$f for $(FUZZTIME)"; \
			$(GO) test $(FUZZFLAGS) -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
		done; \
	done

## test-matrix: the broker matrix: the connector against ZooKeeper-mode brokers of Kafka 0.10.2.2, 1.1.1, 2.8.2 and 3.9 (message formats, codecs, offsets in ZooKeeper and Kafka, leader changes, negotiated versions); MATRIX_BROKERS=1.1.1,2.8.2 narrows it
MATRIX_BROKERS ?=
test-matrix:
	@testinfra/fetch-jars.sh --matrix
	@$(GO) vet -tags matrix ./internal/testrig/testcluster/ ./internal/fetch/ ./connector/
	@ZKCONSUMER_MATRIX_BROKERS=$(MATRIX_BROKERS) $(GO) test -race -count=1 -p 1 -tags matrix -timeout 30m \
		-run '^(TestNegotiatedVersions|TestBrokerMatrix)$$' ./internal/fetch/ ./connector/

## bench: consume throughput and CPU/GB vs sarama, franz-go, kcat and Kafka 1.1.1, and the console consumer vs kcat, on six shapes (BENCH_ROUNDS, BENCH_SHAPES; PACKAGES="clients connector rebalance fetcher" for all; see BENCHMARKS.md)
bench: jars
	@scripts/bench.sh

## chaos: fault-injection runs on a 3-server ZooKeeper ensemble and 3 brokers (kafka-consumer: 3 Kafka 4 KRaft nodes), one per topology (ensemble, roundrobin, kafka, sticky, kafka-cooperative, kafka-consumer), each 1M messages, 5 members, 105 faults, ~15 min; CHAOS_TOPOLOGY=sticky for one; e.g. make chaos CHAOS_TOPOLOGY=ensemble CHAOS_FLAGS='-seed 7 -keep -dir /tmp/chaos'
CHAOS_TOPOLOGY ?= all
chaos: jars
	@$(GO) build -o bin/chaos ./chaos/cmd/chaos
	@bin/chaos -topology $(CHAOS_TOPOLOGY) $(CHAOS_FLAGS)

fmt:
	@gofmt -l -w .

vet:
	@$(GO) vet ./...
	@cd plugin/prometheus && $(GO) vet ./...
	@cd scripts/gettable && GOWORK=off $(GO) vet ./...
	@cd plugin/prometheus/monitoring/check && GOWORK=off $(GO) vet ./...
	@cd scripts/exporters && GOWORK=off $(GO) vet ./...
