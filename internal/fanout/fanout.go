// Package fanout runs independent calls side by side under a bound: the
// ZooKeeper requests of one rebalance step or of one offset fetch or commit,
// which a session pipelines over its connection.
package fanout

import "sync"

// Each calls f(i) for every i in [0, n), at most limit at a time, and
// returns when every call has returned. Before each call starts, stop (if
// not nil) is asked whether to go on: once it returns true, no further call
// starts, and Each waits only for those in flight. f must be safe for
// concurrent use. A single call runs on the caller's goroutine.
func Each(n, limit int, stop func() bool, f func(i int)) {
	if n == 1 {
		if stop == nil || !stop() {
			f(0)
		}
		return
	}
	limit = max(limit, 1)
	var wg sync.WaitGroup
	slots := make(chan struct{}, limit)
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
