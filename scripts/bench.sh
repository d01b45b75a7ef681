#!/usr/bin/env bash
# Benchmarks against a real ZooKeeper and a real Kafka 3.9 broker (ZK mode):
#
#   clients    the consume benchmark of issue #13 (bench/, a Go module of its
#              own): zkconsumer, sarama, franz-go, kcat, zkconsumer's console
#              consumer (to /dev/null, as kcat) and Kafka 1.1.1's
#              ConsumerPerformance --zookeeper on six shapes (100 B x 1 and
#              x 12 partitions, 1 KiB x 4, 10 KiB x 4, 1 KiB x 4 lz4 and
#              zstd), BENCH_ROUNDS alternating rounds, with msgs/s, client
#              CPU-seconds per GB, and the per-round ratios
#   connector  consume throughput of the public API, side by side with a
#              plain sarama partition consumer and kcat on the same topics
#              (100-byte and 1 KiB messages), with the consumer's peak heap;
#              the connector with other settings; its heap when stalled
#   rebalance  latency of a graceful leave in a 4-member group, 32 partitions
#   rebalance-scale  (not by default; once, not per round) leave and crash
#              in groups of 10, 50, 100 members on 100 and 1,000 partitions:
#              settle time and ZooKeeper operations per member
#   fetcher    the fetcher manager against sarama on one partition
#   rebalance latency (BENCH_REBALANCE=1), end to end: a graceful leave in
#              a 4-member group, 32 partitions, zkconsumer in ZooKeeper mode,
#              zkconsumer in Kafka mode on Kafka 3.9 and on Kafka 4.x KRaft,
#              and Kafka's Java console consumers (3.9, 4.x classic), at
#              heartbeat.interval.ms 300 and 3000 (connector package,
#              BenchmarkRebalanceLatency); it also starts a KRaft cluster
#
# Every round runs each benchmark once, so the clients alternate and share
# whatever else the machine is doing; the summary gives each figure's range
# over the rounds and the per-round ratios. Raw output goes to $OUT.
#
# Environment:
#   PACKAGES=clients     which benchmarks to run, out of
#                        "clients connector rebalance fetcher"
#   BENCH_ROUNDS=5       rounds of the clients benchmark (quick: 1)
#   BENCH_SHAPES=p1,p12,1k,10k,lz4,zstd   its shapes (quick: p1,1k)
#   BENCH_CLIENTS=connector,sarama,franz,kcat,console,scala   its clients
#   BENCH_CONSOLE        the console-consumer binary its console client runs
#                        (default: built from this tree for the run)
#   BENCH_SCALE=1        scales its message counts (quick: 0.2)
#   ROUNDS=3             rounds of the others (each: connector, rebalance, fetcher)
#   REBALANCE_OPS=20     leaves measured per round
#                        (PACKAGES=none with BENCH_REBALANCE=1: only that;
#                        PACKAGES=rebalance-scale: the rebalance at scale, once)
#   SCALE_OPS=3          leaves of each kind per group size (rebalance-scale)
#   BENCH_REBALANCE=1    also the end-to-end rebalance latency
#   REBALANCE_LATENCY_OPS=10   leaves measured per round and client
#   REBALANCE_LATENCY_BENCH=.  which of its sub-benchmarks (a -bench pattern
#                        below BenchmarkRebalanceLatency: 'client=java' the
#                        Java ones, '././hb=3s' those at heartbeat 3 s)
#   PROFILE=1            also profile the connector on 100-byte messages
#                        (go test -cpuprofile) and print the top functions
#   ZKCONSUMER_BENCH_SCALE=1   scales the consume benchmarks' message counts
#   ZOOKEEPER_CONNECT, KAFKA_BROKERS   use that cluster instead of starting one
#   KRAFT_BROKERS        use that KRaft cluster (BENCH_REBALANCE=1)
#   OUT=.cache/bench/<time>   where raw results go
#
# Broker and benchmark share the machine's cores; GOMAXPROCS is left at
# its default. Nothing is pinned.
set -euo pipefail
cd "$(dirname "$0")/.."
# bench/ is a module of its own outside the repository's go.work (see the
# comment there): everything here builds without the workspace, the core
# alone as its own go.mod has it and bench/ through its replace directive.
export GOWORK=off

ROUNDS=${ROUNDS:-3}
REBALANCE_OPS=${REBALANCE_OPS:-20}
PACKAGES=${PACKAGES:-clients}
BENCH_REBALANCE=${BENCH_REBALANCE:-0}
REBALANCE_LATENCY_OPS=${REBALANCE_LATENCY_OPS:-10}
REBALANCE_LATENCY_BENCH=${REBALANCE_LATENCY_BENCH:-.}
OUT=${OUT:-.cache/bench/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

if ! command -v kcat >/dev/null; then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    echo "bench.sh: installing kcat (Debian package)" >&2
    apt-get update -qq && apt-get install -y -qq kcat >/dev/null
  else
    echo "bench.sh: kcat is not installed; its benchmarks will be skipped." >&2
    echo "bench.sh: install it with: sudo apt-get install -y kcat" >&2
  fi
fi

testinfra/fetch-jars.sh
state=.cache/bench-cluster
kstate=.cache/bench-kraft-cluster
stops=()
cleanup() {
  for s in "${stops[@]}"; do go run ./internal/testrig/cmd/zkcluster -state "$s" down $([[ $s == "$kstate" ]] && echo -kraft) || true; done
}
trap cleanup EXIT
if [[ -z "${ZOOKEEPER_CONNECT:-}" ]]; then
  # A leftover from an interrupted run would block the start.
  go run ./internal/testrig/cmd/zkcluster -state "$state" down >/dev/null 2>&1 || true
  stops+=("$state")
  # One ZooKeeper server, as when BENCHMARKS.md's figures were measured
  # (an ensemble adds two JVMs on the 2 cores and quorum writes).
  go run ./internal/testrig/cmd/zkcluster -state "$state" up -full-jit -brokers 1 -zookeepers 1 >/dev/null
  set -a; source "$state/env"; set +a
fi
if [[ "$BENCH_REBALANCE" == 1 && -z "${KRAFT_BROKERS:-}" ]]; then
  go run ./internal/testrig/cmd/zkcluster -state "$kstate" down -kraft >/dev/null 2>&1 || true
  stops+=("$kstate")
  go run ./internal/testrig/cmd/zkcluster -state "$kstate" up -full-jit -kraft -brokers 1 >/dev/null
  set -a; source "$kstate/env"; set +a
fi

{
  echo "date:      $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "machine:   $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), Linux $(uname -r)"
  echo "go:        $(go version | cut -d' ' -f3-)"
  echo "kafka:     $(ls .cache/kafka39/lib | sed -n 's/^kafka_2\.13-\(.*\)\.jar$/\1/p') (ZooKeeper mode, 1 broker)"
  echo "sarama:    $(go list -m -f '{{.Version}}' github.com/IBM/sarama)"
  echo "kcat:      $(kcat -V 2>/dev/null | sed -n 's/^Version //p' || echo 'not installed')"
  echo "cluster:   ZOOKEEPER_CONNECT=$ZOOKEEPER_CONNECT KAFKA_BROKERS=$KAFKA_BROKERS"
  if [[ "$BENCH_REBALANCE" == 1 ]]; then
    echo "kafka 4:   $(ls .cache/kafka4/lib | sed -n 's/^kafka_2\.13-\(.*\)\.jar$/\1/p') (KRaft, 1 node) KRAFT_BROKERS=$KRAFT_BROKERS"
    echo "java:      $(java -version 2>&1 | head -1)"
  fi
  echo "load:      $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min, before the run)"
} | tee "$OUT/env.txt"

has() { [[ " $PACKAGES " == *" $1 "* ]]; }

if has clients; then
  (cd bench && go build -o "$OUT/zkbench" . && "$OUT/zkbench" -out "$OUT/clients.jsonl") | tee "$OUT/clients.txt"
fi

others=0; has connector || has rebalance || has fetcher && others=1
for round in $(seq 1 $((others ? ROUNDS : 0))); do
  echo "== round $round of $ROUNDS" >&2
  if has connector; then
    go test -run='^$' -bench='^(BenchmarkConsume|BenchmarkStalledConsumerHeap)' -benchtime=1x -count=1 -timeout=60m ./connector |
      tee -a "$OUT/connector.txt" | grep '^Benchmark' || true
  fi
  if has rebalance; then
    go test -run='^$' -bench='^BenchmarkGracefulLeaveRebalance$' -benchtime="${REBALANCE_OPS}x" -count=1 -timeout=30m ./internal/zkgroup |
      tee -a "$OUT/rebalance.txt" | grep '^Benchmark' || true
  fi
  if has fetcher; then
    go test -run='^$' -bench='^BenchmarkThroughput' -benchtime=3x -count=1 -timeout=30m ./internal/fetch |
      tee -a "$OUT/fetcher.txt" | grep '^Benchmark' || true
  fi
  if [[ "$BENCH_REBALANCE" == 1 ]]; then
    echo "load:      $(cut -d' ' -f1-3 /proc/loadavg) (before rebalance latency, round $round)" >>"$OUT/env.txt"
    go test -run='^$' -bench="^BenchmarkRebalanceLatency\$/$REBALANCE_LATENCY_BENCH" -benchtime="${REBALANCE_LATENCY_OPS}x" \
      -count=1 -timeout=90m ./connector | tee -a "$OUT/rebalance-latency.txt" | grep '^Benchmark' || true
  fi
done

if has rebalance-scale; then
  echo "== rebalance at scale" >&2
  go test -run='^$' -bench='^BenchmarkRebalanceScale$' -benchtime="${SCALE_OPS:-3}x" -count=1 -timeout=60m ./internal/zkgroup |
    tee "$OUT/rebalance-scale.txt" | grep '^Benchmark' || true
fi

if [[ "${PROFILE:-0}" == 1 ]] && has connector; then
  go test -c -o "$OUT/connector.test" ./connector
  # No warm-up read: the rounds warmed the broker, and the profile is the
  # connector's alone.
  for parts in 4 1; do
    bench="^BenchmarkConsume\$/^size=100B\$/^parts=$parts\$/^client=connector\$"
    ZKCONSUMER_BENCH_WARMUP=0 "$OUT/connector.test" -test.run='^$' -test.bench="$bench" -test.benchtime=3x \
      -test.cpuprofile="$OUT/connector-100B-p$parts.cpu.prof" | tee "$OUT/profile-p$parts-run.txt" | grep '^Benchmark' || true
    # The execution trace is a run of its own: tracing skews the CPU profile.
    ZKCONSUMER_BENCH_WARMUP=0 "$OUT/connector.test" -test.run='^$' -test.bench="$bench" -test.benchtime=2x \
      -test.trace="$OUT/connector-100B-p$parts.trace" | tee -a "$OUT/profile-p$parts-run.txt" | grep '^Benchmark' || true
    go tool pprof -top -nodecount=25 "$OUT/connector.test" "$OUT/connector-100B-p$parts.cpu.prof" 2>/dev/null >"$OUT/profile-p$parts-top.txt"
    go tool pprof -top -cum -nodecount=40 "$OUT/connector.test" "$OUT/connector-100B-p$parts.cpu.prof" 2>/dev/null >"$OUT/profile-p$parts-top-cum.txt"
    # Where the fetcher goroutine blocks (waiting for the broker's answer,
    # or on a full stream queue) or waits for a CPU, and where the readers
    # wait for chunks.
    for kind in sync sched; do
      go tool trace -pprof=$kind "$OUT/connector-100B-p$parts.trace" >"$OUT/connector-100B-p$parts.$kind.prof" 2>/dev/null
    done
    {
      echo "## fetcher goroutine, blocked (sync)"
      go tool pprof -top -cum -focus='fetch\.\(\*fetcher\)\.loop' -nodecount=12 "$OUT/connector-100B-p$parts.sync.prof" 2>/dev/null
      echo "## fetcher goroutine, runnable but not running (sched)"
      go tool pprof -top -cum -focus='fetch\.\(\*fetcher\)\.loop' -nodecount=12 "$OUT/connector-100B-p$parts.sched.prof" 2>/dev/null
      echo "## stream readers, blocked (sync)"
      go tool pprof -top -cum -focus='readConnector' -nodecount=12 "$OUT/connector-100B-p$parts.sync.prof" 2>/dev/null
    } >"$OUT/profile-p$parts-blocking.txt"
    echo "== profile, connector, 100-byte messages, $parts partition(s): $OUT/profile-p$parts-*.txt"
    sed -n '1,/^Showing top/d; 1,20p' "$OUT/profile-p$parts-top.txt"
  done
fi

# summary prints, for each benchmark and metric, min / median / max over the
# rounds, and for the consume benchmarks the per-round ratios of the
# connector's msgs/s to sarama's and kcat's.
summary() {
  awk '
    /^Benchmark/ {
      name = $1; sub(/-[0-9]+$/, "", name)
      if (!(name in seen)) { seen[name] = 1; order[++nn] = name }
      for (i = 3; i < NF; i += 2) {
        unit = $(i + 1); k = name SUBSEP unit
        if (!(k in cnt)) { units[name] = units[name] " " unit }
        vals[k, ++cnt[k]] = $i
        if (unit == "msgs/s" && name ~ /\/client=/) {
          split(name, parts, "/client="); run[parts[1], parts[2], cnt[k]] = $i
          if (!(parts[1] in cases)) { cases[parts[1]] = 1; corder[++nc] = parts[1] }
          if (cnt[k] > rounds) rounds = cnt[k]
        }
      }
    }
    function sortk(k, n,   i, j, t) {
      for (i = 1; i <= n; i++) s[i] = vals[k, i]
      for (i = 2; i <= n; i++) for (j = i; j > 1 && s[j - 1] > s[j]; j--) { t = s[j]; s[j] = s[j - 1]; s[j - 1] = t }
    }
    function median(n) { return n % 2 ? s[(n + 1) / 2] : (s[n / 2] + s[n / 2 + 1]) / 2 }
    END {
      for (o = 1; o <= nn; o++) {
        name = order[o]; printf "%s\n", name
        nu = split(units[name], us, " ")
        for (u = 1; u <= nu; u++) {
          k = name SUBSEP us[u]; n = cnt[k]; sortk(k, n)
          printf "  %-14s min %-12.4g median %-12.4g max %-12.4g (n=%d)\n", us[u], s[1], median(n), s[n], n
        }
      }
      for (o = 1; o <= nc; o++) {
        c = corder[o]
        for (w = 1; w <= 2; w++) {
          other = w == 1 ? "sarama" : "kcat"; n = 0; line = ""
          for (r = 1; r <= rounds; r++) {
            cn = run[c, "connector", r]; ot = run[c, other, r]
            if (cn == "" || ot == "") continue
            vals["ratio", ++n] = cn / ot; line = line sprintf(" %.2f", cn / ot)
          }
          if (n == 0) continue
          sortk("ratio", n)
          printf "%s: connector/%s msgs/s by round:%s; min %.2f median %.2f max %.2f\n", c, other, line, s[1], median(n), s[n]
        }
      }
    }'
}

# pooled prints, for each BenchmarkRebalanceLatency client, the
# distribution of every op of every round (its "ops-ms" log lines).
pooled() {
  awk '
    /ops-ms BenchmarkRebalanceLatency/ {
      rest = $0; sub(/.*ops-ms /, "", rest)
      k = index(rest, ": "); name = substr(rest, 1, k - 1)
      if (!(name in cnt)) order[++nn] = name
      m = split(substr(rest, k + 2), vs, " ")
      for (i = 1; i <= m; i++) vals[name, ++cnt[name]] = vs[i] + 0
    }
    END {
      for (o = 1; o <= nn; o++) {
        name = order[o]; n = cnt[name]
        for (i = 1; i <= n; i++) s[i] = vals[name, i]
        for (i = 2; i <= n; i++) for (j = i; j > 1 && s[j - 1] > s[j]; j--) { t = s[j]; s[j] = s[j - 1]; s[j - 1] = t }
        med = n % 2 ? s[(n + 1) / 2] : (s[n / 2] + s[n / 2 + 1]) / 2
        r = int(0.9 * n); if (r < 0.9 * n) r++   # nearest rank
        printf "%s\n  pooled ms      n=%d min %.1f median %.1f p90 %.1f max %.1f\n", name, n, s[1], med, s[r], s[n]
      }
    }'
}

echo
echo "== summary (raw results in $OUT)"
{
  for f in connector rebalance fetcher rebalance-latency; do
    if [[ -f "$OUT/$f.txt" ]]; then summary <"$OUT/$f.txt"; fi
  done
  if [[ -f "$OUT/rebalance-latency.txt" ]]; then pooled <"$OUT/rebalance-latency.txt"; fi
} | tee "$OUT/summary.txt"
echo "load:      $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min, after the run)" | tee -a "$OUT/env.txt"
