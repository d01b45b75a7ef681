package fetcher

import "errors"

var (
	// ErrClosed is returned by StartConnections once Close has been called.
	ErrClosed = errors.New("fetcher: manager closed")

	// ErrAlreadyStarted is returned by StartConnections while the
	// connections of an earlier call are running: call StopConnections
	// first.
	ErrAlreadyStarted = errors.New("fetcher: connections already started")

	// ErrNoBrokers is reported (Config.OnError) when the broker list is
	// empty or no broker on it answers a metadata request. The leader
	// finder keeps trying.
	ErrNoBrokers = errors.New("fetcher: no broker available")

	// errStopped is the cause of a run's or a fetcher's context when it is
	// stopped on purpose.
	errStopped = errors.New("fetcher: stopped")
)
