package rebalance

import "sync"

// zkInFlight bounds the ZooKeeper requests one rebalance step of one member
// has in flight at once. The requests of a step are independent (the
// registrations of the group, the owner nodes to claim or release), and one
// session pipelines them over its connection, so a step takes a few round
// trips instead of one per node; the bound keeps a member of a large group
// from queueing thousands of requests (and goroutines) at once.
const zkInFlight = 16

// forEach calls f(i) for every i in [0, n), at most zkInFlight at a time,
// and returns when every call has returned. Before each call starts, stop
// (if not nil) is asked whether to go on: once it returns true, no further
// call starts, and forEach waits only for those in flight. f must be safe
// for concurrent use.
func forEach(n int, stop func() bool, f func(i int)) {
	if n == 1 {
		if stop == nil || !stop() {
			f(0)
		}
		return
	}
	var wg sync.WaitGroup
	slots := make(chan struct{}, zkInFlight)
	for i := range n {
		slots <- struct{}{}
		if stop != nil && stop() {
			<-slots
			break
		}
		wg.Go(func() {
			defer func() { <-slots }()
			f(i)
		})
	}
	wg.Wait()
}
