package fetch

import (
	"context"
	"net"
)

// connReader is the goroutine that sends a fetcher's fetch requests on its
// connection and reads their responses, one at a time, for as long as the
// connection lives: the request sent ahead (see fetcher.sendAhead) and the
// fetcher's own round trips go through it, so no goroutine is started per
// request, and the one that reads responses (parsing them as they arrive,
// see respParser) keeps its grown stack and its place in the
// scheduler. It is started by connect and ends when the connection's
// context does (disconnect waits for it).
type connReader struct {
	in   chan *pendingFetch
	done chan struct{}
}

// startReader starts the reader of w, which lives until ctx ends.
func (f *fetcher) startReader(ctx context.Context, w *wireConn) *connReader {
	r := &connReader{in: make(chan *pendingFetch), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		for {
			select {
			case a := <-r.in:
				a.res = f.roundTrip(w, a.req)
				close(a.done)
			case <-ctx.Done():
				return
			}
		}
	}()
	return r
}

// submit hands a request to the reader; a.done is closed once its outcome
// is in a.res.
func (r *connReader) submit(a *pendingFetch) {
	select {
	case r.in <- a:
	case <-r.done:
		a.res = timedFetch{err: net.ErrClosed}
		close(a.done)
	}
}

// exchange sends req through the reader and waits for its outcome.
func (r *connReader) exchange(req *fetchRequest) timedFetch {
	a := &pendingFetch{req: req, done: make(chan struct{})}
	r.submit(a)
	<-a.done
	return a.res
}
