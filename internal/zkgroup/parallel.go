package zkgroup

import "github.com/zkconsumer/zkconsumer/internal/fanout"

// zkInFlight bounds the ZooKeeper requests one rebalance step of one member
// has in flight at once. The requests of a step are independent (the
// registrations of the group, the owner nodes to claim, release or wait
// for), and one session pipelines them over its connection, so a step
// takes a few round trips instead of one per node: with ZooKeeper 10 ms
// away, 200 owner nodes cost tens of milliseconds at 256 in flight and
// about 125 ms at 16 (BENCHMARKS.md, "Stop-the-world time"). The bound,
// the same as the connector's offset fetches and commits, keeps a member
// of a large group from queueing thousands of requests (and goroutines) at
// once.
const zkInFlight = 256

// forEach calls f(i) for every i in [0, n), at most zkInFlight at a time
// (see fanout.Each for stop).
func forEach(n int, stop func() bool, f func(i int)) { fanout.Each(n, zkInFlight, stop, f) }

// zkMultiOps bounds the operations of one ZooKeeper transaction (multi) of
// a rebalance step: owner nodes are created and deleted in transactions,
// which cost ZooKeeper one proposal each instead of one per node (200
// creates, ZooKeeper reached directly: 3.6 ms in one transaction, 28–34 ms
// as 200 pipelined requests; internal/zksession's BenchmarkOwnerWrites,
// BENCHMARKS.md, "Stop-the-world time"). 256 operations on owner nodes stay
// far below ZooKeeper's 1 MB request limit (jute.maxbuffer).
const zkMultiOps = 256

// batchesOf splits [0, n) into ranges [from, to) of at most zkMultiOps.
func batchesOf(n int) [][2]int {
	var out [][2]int
	for from := 0; from < n; from += zkMultiOps {
		out = append(out, [2]int{from, min(from+zkMultiOps, n)})
	}
	return out
}
