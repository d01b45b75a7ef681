package fetch

import "errors"

var (
	// ErrClosed is returned by StartConnections once Close has been called.
	ErrClosed = errors.New("manager closed")

	// ErrAlreadyStarted is returned by StartConnections while the
	// connections of an earlier call are running: call StopConnections
	// first.
	ErrAlreadyStarted = errors.New("connections already started")

	// ErrNoBrokers is reported (Config.OnError) when the broker list is
	// empty or no broker on it answers a metadata request. The leader
	// finder keeps trying.
	ErrNoBrokers = errors.New("no broker available")

	// ErrNoLeader is wrapped by the errors reported (Config.OnError, as a
	// *stream.PartitionError) for a partition that has stayed without a
	// leader: its topic was deleted or is not authorised, no replica is
	// alive, ... They also wrap the broker's error code (a sarama.KError,
	// such as sarama.ErrUnknownTopicOrPartition or
	// sarama.ErrTopicAuthorizationFailed) when there is one. The leader
	// finder keeps trying.
	ErrNoLeader = errors.New("partition has no leader")

	// ErrDecodedTooLarge is wrapped, with stream.ErrMessageTooLarge, by the
	// error a partition's stream reports when one record would decode to
	// more than Config.MaxDecodedBytes (its message, headers and the
	// decompressed bytes it needs at once), or a compressed batch cannot
	// be decompressed as a stream within it (see Config.MaxDecodedBytes).
	// The partition stops there until the next generation; a larger
	// MaxDecodedBytes or fetch size lets it through.
	ErrDecodedTooLarge = errors.New("batch decodes to more than MaxDecodedBytes")

	// errStopped is the cause of a run's or a fetcher's context when it is
	// stopped on purpose.
	errStopped = errors.New("stopped")
)
