package connector

import (
	"sync"
	"time"
)

// rateWindow is the number of seconds over which fetchRates measures.
const rateWindow = 60

// fetchRates measures the fetch request rate of each broker over the last
// minute, in one-second buckets, for Stats.MinFetchRate. A broker not
// fetched from for a minute is forgotten. The zero value is ready; all
// methods are safe for concurrent use.
type fetchRates struct {
	mu      sync.Mutex
	brokers map[int32]*brokerRate
}

// brokerRate counts one broker's requests: counts[i] those of the second
// seconds[i] (Unix time), for the seconds i ≡ second mod rateWindow.
type brokerRate struct {
	counts  [rateWindow]int64
	seconds [rateWindow]int64
	last    int64 // the last second with a request
}

// mark counts a request to broker at now.
func (r *fetchRates) mark(broker int32, now time.Time) {
	sec := now.Unix()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.brokers == nil {
		r.brokers = map[int32]*brokerRate{}
	}
	b := r.brokers[broker]
	if b == nil {
		b = &brokerRate{}
		r.brokers[broker] = b
	}
	i := sec % rateWindow
	if b.seconds[i] != sec {
		b.seconds[i], b.counts[i] = sec, 0
	}
	b.counts[i]++
	b.last = sec
}

// min returns the smallest rate, in requests per second over the last
// rateWindow seconds, of the brokers fetched from in that time; 0 if none.
func (r *fetchRates) min(now time.Time) float64 {
	sec := now.Unix()
	r.mu.Lock()
	defer r.mu.Unlock()
	lowest, found := 0.0, false
	for id, b := range r.brokers {
		if sec-b.last >= rateWindow {
			delete(r.brokers, id)
			continue
		}
		var n int64
		for i, s := range b.seconds {
			if sec-s < rateWindow {
				n += b.counts[i]
			}
		}
		rate := float64(n) / rateWindow
		if !found || rate < lowest {
			lowest, found = rate, true
		}
	}
	return lowest
}
