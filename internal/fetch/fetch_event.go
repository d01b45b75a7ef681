package fetch

import (
	"time"
)

// FetchEvent describes one fetch request of a fetcher, for metrics
// (Kafka's FetchRequestAndResponseMetrics and FetcherStats).
type FetchEvent struct {
	// Broker is the id of the broker fetched from; Addr its address.
	Broker int32
	Addr   string
	// Duration is the time from sending the request to having its
	// response decoded, including the broker's wait for fetch.min.bytes
	// (up to fetch.wait.max.ms).
	Duration time.Duration
	// Bytes is the size of the response as read from the connection.
	Bytes int64
	// Err is why the request failed, nil if it did not. Errors of single
	// partitions in a response do not count.
	Err error
}

// timedFetch is the outcome of one fetch request, measured.
type timedFetch struct {
	resp  *fetchResponse
	err   error
	took  time.Duration
	bytes int64
}

// roundTrip sends req on b and waits for the response, measuring it when
// the manager has an OnFetch hook. The response is read into a buffer of
// the fetcher's pools. The fetcher's connection carries one request at a
// time, so the bytes read during the call are the response's.
func (f *fetcher) roundTrip(w *wireConn, req *fetchRequest) timedFetch {
	if f.run.m.cfg.OnFetch == nil {
		resp, err := w.roundTrip(req, f.pools)
		return timedFetch{resp: resp, err: err}
	}
	before, start := f.read.Load(), time.Now()
	resp, err := w.roundTrip(req, f.pools)
	return timedFetch{resp: resp, err: err, took: time.Since(start), bytes: f.read.Load() - before}
}

// observe reports a fetch request to the OnFetch hook, if any. err is the
// request's error, including a response-level error code.
func (f *fetcher) observe(t timedFetch, err error) {
	if on := f.run.m.cfg.OnFetch; on != nil {
		on(FetchEvent{Broker: f.key.broker, Addr: f.addr, Duration: t.took, Bytes: t.bytes, Err: err})
	}
}
