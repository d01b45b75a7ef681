package fetch

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/IBM/sarama"
)

// Values accepted by Config.AutoOffsetReset (auto.offset.reset).
const (
	// AutoOffsetResetSmallest starts from the oldest offset the broker
	// still has (ListOffsets time -2).
	AutoOffsetResetSmallest = "smallest"
	// AutoOffsetResetLargest starts from the end of the log (ListOffsets
	// time -1), Kafka's default.
	AutoOffsetResetLargest = "largest"
)

// Values accepted by Config.IsolationLevel.
const (
	// IsolationReadUncommitted delivers every data record, as Kafka's Scala
	// consumer does (fetch v3 has no isolation level). The default.
	IsolationReadUncommitted = "read_uncommitted"
	// IsolationReadCommitted delivers records up to the last stable offset
	// and drops those of aborted transactions. It needs brokers that speak
	// fetch v4 (Kafka 0.11+); older brokers behave as read_uncommitted.
	IsolationReadCommitted = "read_committed"
)

// defaultVersion caps the protocol versions when Config.Sarama is nil.
// Sarama (1.46+) negotiates every request down to what the broker advertises
// in ApiVersions, so the cap only picks the newest version we are willing to
// speak: against Kafka 2.7+ that is Fetch v12 (sarama's newest), ListOffsets
// v6 and Metadata v11; against 0.10.1 it is Fetch v3, what Kafka 1.1.1's
// consumer sent; 0.10.0 gets Fetch v2.
var defaultVersion = sarama.V3_9_0_0

// ErrInvalidConfig is wrapped by the errors of Config.Validate.
var ErrInvalidConfig = errors.New("invalid config")

// Config configures a ConsumerFetcherManager. Field names follow the
// connector's; each names the Kafka consumer property it carries.
//
// The zero Config is not Kafka's defaults: FetchMinBytes, FetchWaitMax,
// RefreshLeaderBackoff and CheckCRCs are taken as given (zero and false
// are legal). Start from DefaultConfig.
type Config struct {
	// ClientID is sent with every request: client.id (Kafka defaults it to
	// the group id). Empty means "zkconsumer".
	ClientID string

	// FetchMinBytes is the least data a broker returns for a fetch,
	// waiting up to FetchWaitMax for it: fetch.min.bytes, default 1.
	FetchMinBytes int32

	// FetchWaitMax is how long a broker may hold a fetch that does not have
	// FetchMinBytes yet: fetch.wait.max.ms, default 100ms. At most
	// SocketTimeout.
	FetchWaitMax time.Duration

	// SocketTimeout bounds connecting to a broker and waiting for a
	// response (on top of FetchWaitMax for fetches): socket.timeout.ms,
	// default 30s. Zero means the default.
	SocketTimeout time.Duration

	// RefreshLeaderBackoff is the pause between two rounds of the leader
	// finder and the fetchers' pause after a failed request:
	// refresh.leader.backoff.ms, default 200ms.
	RefreshLeaderBackoff time.Duration

	// NumFetchers is the number of fetchers, each with its own connection,
	// per broker: num.consumer.fetchers, default 1. Zero means 1.
	NumFetchers int

	// AutoOffsetReset says where a partition starts when its offset is
	// negative (nothing committed) or out of range: auto.offset.reset,
	// AutoOffsetResetSmallest or AutoOffsetResetLargest. Empty means
	// largest, Kafka's default.
	AutoOffsetReset string

	// IsolationLevel is IsolationReadUncommitted (the default, also when
	// empty) or IsolationReadCommitted: zkconsumer.isolation.level.
	IsolationLevel string

	// SocketReceiveBufferBytes is the TCP receive buffer of each fetch
	// connection: socket.receive.buffer.bytes. Zero or less (Kafka's -1,
	// the default) keeps the operating system's default, which on Linux
	// is receive-buffer autotuning (net.ipv4.tcp_rmem), as librdkafka
	// does by default; any explicit size turns autotuning off for the
	// socket. A positive size is set before connecting, so that the TCP
	// window scale fits it.
	SocketReceiveBufferBytes int

	// CheckCRCs verifies the checksum of every record batch (CRC-32C) and
	// message (CRC-32) fetched: check.crcs, the Java consumer's key,
	// default true. A batch whose checksum does not match stops its
	// partition with stream.ErrCorruptMessage. False skips the checksums,
	// as librdkafka does by default (check.crcs=false): corruption on the
	// wire or disk then goes unnoticed unless it breaks the structure.
	CheckCRCs bool

	// MaxDecodedBytes bounds what one chunk (one partition's messages
	// from one fetch response, as queued for its stream) may hold beyond
	// the response: the decompressed payloads its messages alias plus its
	// messages and record headers (152 and 48 bytes each on 64-bit
	// platforms). Kafka has no such property (its consumers decompress
	// record by record as they iterate); the connector's would be
	// zkconsumer.fetch.max.decoded.bytes. Zero, the default, means 32 ×
	// the partition's fetch size (fetch.message.max.bytes), taken at
	// 1 MiB at least: 32 MiB with Kafka's default fetch size. A block that
	// decodes to more is queued in as many chunks as it takes, from the
	// same response, the records of one batch across chunks if need be (a
	// compressed batch whose payload alone exceeds the limit is
	// decompressed as a stream, piece by piece), so no legal batch is
	// refused for its size. What stops a partition, with an error
	// wrapping stream.ErrMessageTooLarge and ErrDecodedTooLarge, is a
	// single record that alone needs more than the limit, or a batch that
	// cannot be streamed within it: a zstd frame whose window is larger
	// (a single-segment frame's window is its whole content; producers'
	// windows are a few MiB at most), or a raw snappy block larger than
	// it. Brokers limit only compressed sizes, and a few kilobytes of zstd
	// can inflate to gigabytes: this is what bounds the memory of a
	// fetched chunk beyond the response it came in (see the memory bound
	// of docs/tuning.md).
	MaxDecodedBytes int64

	// RecycleMessages lets the data path reuse the memory of messages:
	// the fetch responses they alias, the buffers compressed batches are
	// decompressed into, and the stream.Message structs themselves, as
	// librdkafka does once an application destroys a message. A message,
	// its Key, Value and Headers are then valid only until the next call
	// to Next on its stream; use Message.Clone to keep one, and do not
	// MarkConsumed a message after that (mark its Clone). The free lists each fetcher keeps hold at
	// most one response and MaxDecodedBytes' worth of the rest. Kafka has
	// no such property; the connector's is zkconsumer.recycle.messages
	// (Config.RecycleMessages). False, the default, keeps every Kafka client's contract: a message
	// stays valid for as long as the application keeps it.
	RecycleMessages bool

	// Logger receives the manager's log records. Nil discards them.
	Logger *slog.Logger

	// OnError, if set, is told about errors the manager retries by itself:
	// the broker list cannot be read or is empty, or no broker answers a
	// metadata request (ErrNoBrokers), or a leader cannot be reached (once
	// per series of failures, not at every retry), partition errors other
	// than the usual leadership changes, and partitions left without a
	// leader for a while, say by a deleted or unauthorised topic (both as
	// *stream.PartitionError; the latter wrap ErrNoLeader and the broker's
	// error code, and repeat at most once a minute). It is called from the manager's goroutines and must return quickly
	// without calling back into the manager. Errors that stop a partition,
	// such as a message larger than its fetch size, go to the partition's
	// stream instead.
	OnError func(error)

	// OnFetch, if set, is told about every fetch request a fetcher
	// completes or fails, for metrics. It is called from the fetchers'
	// goroutines, once per request (never per message), and must return
	// quickly without calling back into the manager. Nil costs nothing.
	OnFetch func(FetchEvent)

	// Sarama, if set, is the base of the configuration of every broker
	// connection, for TLS, SASL, a proxy dialer or a pinned Version (which
	// caps the protocol versions). The manager copies it and overrides
	// ClientID, the Net timeouts and, to be able to interrupt blocked
	// requests, the dialer (a configured proxy dialer is still used under
	// it). Nil means sarama.NewConfig() with Version = sarama.V3_9_0_0; sarama
	// negotiates each request down to what the broker supports, so brokers
	// from 0.10.0 up work.
	Sarama *sarama.Config
}

// DefaultConfig returns Kafka 1.1.1's defaults.
func DefaultConfig() Config {
	return Config{
		ClientID:                 "zkconsumer",
		FetchMinBytes:            1,
		FetchWaitMax:             100 * time.Millisecond,
		SocketTimeout:            30 * time.Second,
		RefreshLeaderBackoff:     200 * time.Millisecond,
		NumFetchers:              1,
		AutoOffsetReset:          AutoOffsetResetLargest,
		IsolationLevel:           IsolationReadUncommitted,
		SocketReceiveBufferBytes: -1,
		CheckCRCs:                true,
	}
}

// withDefaults fills in the fields whose zero value means "the default".
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.ClientID == "" {
		c.ClientID = d.ClientID
	}
	if c.SocketTimeout == 0 {
		c.SocketTimeout = d.SocketTimeout
	}
	if c.NumFetchers == 0 {
		c.NumFetchers = d.NumFetchers
	}
	if c.AutoOffsetReset == "" {
		c.AutoOffsetReset = d.AutoOffsetReset
	}
	if c.IsolationLevel == "" {
		c.IsolationLevel = d.IsolationLevel
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return c
}

// Validate reports the first invalid field, wrapping ErrInvalidConfig. Zero
// values that mean "the default" are valid.
func (c Config) Validate() error {
	c = c.withDefaults()
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, args...))
	}
	switch {
	case c.FetchMinBytes < 0:
		return bad("FetchMinBytes %d is negative", c.FetchMinBytes)
	case c.FetchWaitMax < 0:
		return bad("FetchWaitMax %v is negative", c.FetchWaitMax)
	case c.SocketTimeout < 0:
		return bad("SocketTimeout %v is negative", c.SocketTimeout)
	case c.FetchWaitMax > c.SocketTimeout:
		return bad("FetchWaitMax %v exceeds SocketTimeout %v", c.FetchWaitMax, c.SocketTimeout)
	case c.FetchWaitMax/time.Millisecond > (1<<31 - 1):
		return bad("FetchWaitMax %v does not fit a fetch request", c.FetchWaitMax)
	case c.RefreshLeaderBackoff < 0:
		return bad("RefreshLeaderBackoff %v is negative", c.RefreshLeaderBackoff)
	case c.NumFetchers < 0:
		return bad("NumFetchers %d is negative", c.NumFetchers)
	case c.MaxDecodedBytes < 0:
		return bad("MaxDecodedBytes %d is negative", c.MaxDecodedBytes)
	case c.AutoOffsetReset != AutoOffsetResetSmallest && c.AutoOffsetReset != AutoOffsetResetLargest:
		return bad("AutoOffsetReset %q is neither %q nor %q", c.AutoOffsetReset, AutoOffsetResetSmallest, AutoOffsetResetLargest)
	case c.IsolationLevel != IsolationReadUncommitted && c.IsolationLevel != IsolationReadCommitted:
		return bad("IsolationLevel %q is neither %q nor %q", c.IsolationLevel, IsolationReadUncommitted, IsolationReadCommitted)
	}
	if err := c.saramaConfig().Validate(); err != nil {
		return bad("sarama: %v", err)
	}
	return nil
}

// saramaConfig returns the base configuration of the manager's broker
// connections: a copy of c.Sarama (or sarama's defaults capped at
// defaultVersion) with the client id and the timeouts of c.
func (c Config) saramaConfig() *sarama.Config {
	var sc sarama.Config
	if c.Sarama != nil {
		sc = *c.Sarama
	} else {
		sc = *sarama.NewConfig()
		sc.Version = defaultVersion
	}
	sc.ClientID = c.ClientID
	sc.Net.DialTimeout = c.SocketTimeout
	sc.Net.WriteTimeout = c.SocketTimeout
	// A fetch may legitimately sit on the broker for FetchWaitMax before
	// its response starts.
	sc.Net.ReadTimeout = c.SocketTimeout + c.FetchWaitMax
	// One request at a time per connection, like Kafka's blocking channel.
	sc.Net.MaxOpenRequests = 1
	return &sc
}

// readCommitted reports whether c asks for read_committed.
func (c Config) readCommitted() bool { return c.IsolationLevel == IsolationReadCommitted }

// resetTime is the ListOffsets time for AutoOffsetReset: -2 (earliest) for
// smallest, -1 (latest) otherwise, as Kafka's ConsumerFetcherThread does.
func (c Config) resetTime() int64 {
	if c.AutoOffsetReset == AutoOffsetResetSmallest {
		return sarama.OffsetOldest
	}
	return sarama.OffsetNewest
}
