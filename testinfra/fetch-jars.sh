#!/usr/bin/env bash
# Resolves the jars of the local test cluster from Maven Central into .cache/:
#   .cache/kafka39/lib   Apache Kafka 3.9.x broker (ZooKeeper mode) + ZooKeeper 3.8
#   .cache/kafka111/lib  Kafka 1.1.1 Scala tools (old consumer), Java 17-safe
#   .cache/kafka4/lib    Apache Kafka 4.x broker (KRaft mode, no ZooKeeper) + tools
# With --matrix (make test-matrix), also the older brokers of the broker
# matrix (make test does not need them):
#   .cache/kafka-broker-2.8.2/lib     Apache Kafka 2.8.2 broker (ZooKeeper mode)
#   .cache/kafka-broker-0.10.2.2/lib  Apache Kafka 0.10.2.2 broker
# (the matrix's Kafka 1.1.1 broker runs from .cache/kafka111: its core jar
# is the broker too).
# A warm cache is detected by a stamp holding the POM's checksum, so re-runs
# are offline and take milliseconds.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
plugin=org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies

# fetch NAME [extra maven args...]: resolves testinfra/NAME/pom.xml into .cache/NAME/lib.
fetch() {
  local name=$1; shift
  local pom="$root/testinfra/$name/pom.xml" out="$root/.cache/$name/lib"
  local want; want="$(sha256sum "$pom" | cut -d' ' -f1) $*"
  if [[ -f "$out/.stamp" && "$(cat "$out/.stamp")" == "$want" ]]; then
    return 0
  fi
  rm -rf "$out"; mkdir -p "$out"
  echo "fetch-jars: resolving $name ($*) from Maven Central into .cache/$name/lib" >&2
  # Offline first (a warm ~/.m2 needs no network), then online.
  if ! mvn -B -q -o -f "$pom" "$plugin" -DoutputDirectory="$out" -DincludeScope=runtime "$@" >/dev/null 2>&1; then
    mvn -B -q -f "$pom" "$plugin" -DoutputDirectory="$out" -DincludeScope=runtime "$@" || return 1
  fi
  echo "$want" > "$out/.stamp"
}

# Kafka 3.9.2 is the last ZooKeeper-capable release; fall back to older 3.9 patches.
ok=
for v in 3.9.2 3.9.1 3.9.0; do
  if fetch kafka39 "-Dkafka.version=$v"; then ok=$v; break; fi
  echo "fetch-jars: Kafka $v could not be resolved, trying the next 3.9 release" >&2
done
[[ -n $ok ]] || { echo "fetch-jars: no Kafka 3.9.x broker could be resolved from Maven Central" >&2; exit 1; }
fetch kafka111

# Kafka 4.x (KRaft only) for the tests against Kafka's own group coordinator:
# the newest release that runs on Java 17, falling back to its neighbours.
# Adds ~45 MB and ~15 s to a cold fetch.
ok=
for v in 4.4.0 4.3.1 4.2.2 4.1.2; do
  if fetch kafka4 "-Dkafka.version=$v"; then ok=$v; break; fi
  echo "fetch-jars: Kafka $v could not be resolved, trying the next 4.x release" >&2
done
[[ -n $ok ]] || { echo "fetch-jars: no Kafka 4.x broker could be resolved from Maven Central" >&2; exit 1; }

if [[ ${1:-} == --matrix ]]; then
  fetch kafka-broker-2.8.2
  fetch kafka-broker-0.10.2.2
fi
