#!/usr/bin/env bash
# bench_console.sh: the console consumer to /dev/null against kcat -c N on
# the same topic, in alternating rounds (issue #13's console-consumer goal).
#
# Usage: scripts/bench_console.sh ZK_CONNECT BROKER TOPIC N ROUNDS BIN...
#
# Each BIN is a console-consumer binary (go build -o ... ./examples/console-consumer).
# Every round runs kcat, then each BIN, once: wall and CPU (user+sys) time
# including start-up, each consumer from the beginning (the console
# consumer in a fresh generated group), exiting at the N-th message. The
# summary gives, per client, the median and best msgs/s and the median CPU
# seconds.
set -euo pipefail
zk=$1 broker=$2 topic=$3 n=$4 rounds=$5
shift 5
out=$(mktemp)
trap 'rm -f "$out"' EXIT
measure() { # name cmd...: appends "name wall cpu" to $out
  local name=$1
  shift
  /usr/bin/time -f "%e %U %S" -o /tmp/bench_console.time "$@" >/dev/null 2>/tmp/bench_console.err
  read -r e u s </tmp/bench_console.time
  echo "$name $e $(echo "$u + $s" | bc)" | tee -a "$out"
}
for r in $(seq 1 "$rounds"); do
  measure kcat kcat -C -b "$broker" -t "$topic" -o beginning -c "$n" -q
  for bin in "$@"; do
    measure "$(basename "$bin")" "$bin" --zookeeper "$zk" --topic "$topic" --from-beginning --max-messages "$n"
  done
done
echo "client median-msgs/s best-msgs/s median-cpu-s (n=$n, $rounds rounds)"
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for name in kcat $(for b in "$@"; do basename "$b"; done); do
  wmed=$(awk -v name="$name" '$1 == name { print $2 }' "$out" | median)
  wbest=$(awk -v name="$name" '$1 == name { print $2 }' "$out" | sort -n | head -1)
  cmed=$(awk -v name="$name" '$1 == name { print $3 }' "$out" | median)
  awk -v name="$name" -v n="$n" -v m="$wmed" -v b="$wbest" -v c="$cmed" \
    'BEGIN { printf "%s %.2fM %.2fM %.2f\n", name, n / m / 1e6, n / b / 1e6, c }'
done
