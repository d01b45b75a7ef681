package groups

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/secure"
	"github.com/zkconsumer/zkconsumer/internal/zkbrokers"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
)

// Timestamps of a ListOffsets request that ask for the ends of the log
// rather than an offset by time (Kafka's ListOffsetsRequest.EARLIEST_TIMESTAMP
// and LATEST_TIMESTAMP).
const (
	earliestTime = sarama.OffsetOldest // -2
	latestTime   = sarama.OffsetNewest // -1
)

// LogOffsets asks the brokers registered in ZooKeeper for the offsets of
// partitions' logs: the earliest (log start), the latest (log end, the high
// watermark) and the first offset at or after a time. Each partition's
// leader comes from /brokers/topics/<t>/partitions/<p>/state and its
// address from the first endpoint of /brokers/ids/<id> with the security
// protocol of sec (PLAINTEXT, as Kafka 1.1.1's ZooKeeper-based tools do,
// when sec is nil) or its listener; requests go to the leader with
// ListOffsets (sarama's protocol layer, no sarama client). It is not safe
// for concurrent use; Close closes its broker connections.
type LogOffsets struct {
	zk      *zksession.Session
	timeout time.Duration
	conf    *sarama.Config
	sec     *secure.Client

	mu    sync.Mutex
	conns map[int32]*sarama.Broker
}

// NewLogOffsets returns a LogOffsets that reads leaders and brokers through
// zk and bounds every connection and request by timeout. sec, if not nil,
// secures the broker connections (--command-config).
func NewLogOffsets(zk *zksession.Session, timeout time.Duration, sec *secure.Client) *LogOffsets {
	conf := sarama.NewConfig()
	conf.ClientID = "zkconsumer-groups"
	// ListOffsets v1: one offset per partition, by time too (0.10.1+).
	conf.Version = sarama.V0_10_1_0
	conf.Net.DialTimeout = timeout
	conf.Net.ReadTimeout = timeout
	conf.Net.WriteTimeout = timeout
	conf.Net.MaxOpenRequests = 1
	if sec != nil {
		sec.Apply(conf)
	}
	return &LogOffsets{zk: zk, timeout: timeout, conf: conf, sec: sec, conns: map[int32]*sarama.Broker{}}
}

// Close closes the broker connections.
func (l *LogOffsets) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, b := range l.conns {
		_ = b.Close()
		delete(l.conns, id)
	}
	return nil
}

// PartitionOffsetError reports a partition whose log offset could not be
// had.
type PartitionOffsetError struct {
	TopicPartition
	Err error
}

// Error returns "log offsets of <topic>-<partition>: <cause>".
func (e *PartitionOffsetError) Error() string {
	return fmt.Sprintf("log offsets of %s-%d: %v", e.Topic, e.Partition, e.Err)
}

// Unwrap returns the cause.
func (e *PartitionOffsetError) Unwrap() error { return e.Err }

// Earliest returns the log start offset of each partition. Partitions it
// could not get are missing from the map and reported in the error (one
// *PartitionOffsetError each, joined).
func (l *LogOffsets) Earliest(ctx context.Context, tps []TopicPartition) (map[TopicPartition]int64, error) {
	return l.list(ctx, tps, func(TopicPartition) int64 { return earliestTime })
}

// Latest returns the log end offset (high watermark) of each partition,
// like Earliest.
func (l *LogOffsets) Latest(ctx context.Context, tps []TopicPartition) (map[TopicPartition]int64, error) {
	return l.list(ctx, tps, func(TopicPartition) int64 { return latestTime })
}

// ForTime returns the first offset of tp whose message timestamp is at or
// after ms (milliseconds since the epoch), or -1 when every message is
// older (PlanReset then uses the log end offset, as Kafka's --to-datetime
// does). It has the signature of OffsetForTime.
func (l *LogOffsets) ForTime(ctx context.Context, tp TopicPartition, ms int64) (int64, error) {
	if ms < 0 {
		return 0, fmt.Errorf("time %d is before the epoch", ms)
	}
	m, err := l.list(ctx, []TopicPartition{tp}, func(TopicPartition) int64 { return ms })
	if err != nil {
		return 0, err
	}
	return m[tp], nil
}

// list asks each partition's leader for the offset at when(tp). A
// partition-level answer of -1 (no message at or after a time) is
// returned as -1.
func (l *LogOffsets) list(ctx context.Context, tps []TopicPartition, when func(TopicPartition) int64) (map[TopicPartition]int64, error) {
	out := make(map[TopicPartition]int64, len(tps))
	var errs []error
	byLeader := map[int32][]TopicPartition{}
	for _, tp := range tps {
		leader, err := l.leader(ctx, tp)
		if err != nil {
			errs = append(errs, &PartitionOffsetError{TopicPartition: tp, Err: err})
			continue
		}
		byLeader[leader] = append(byLeader[leader], tp)
	}
	for leader, parts := range byLeader {
		req := &sarama.OffsetRequest{Version: 1}
		for _, tp := range parts {
			req.AddBlock(tp.Topic, tp.Partition, when(tp), 1)
		}
		resp, err := l.send(ctx, leader, req)
		if err != nil {
			for _, tp := range parts {
				errs = append(errs, &PartitionOffsetError{TopicPartition: tp, Err: err})
			}
			continue
		}
		for _, tp := range parts {
			b := resp.GetBlock(tp.Topic, tp.Partition)
			switch {
			case b == nil:
				errs = append(errs, &PartitionOffsetError{TopicPartition: tp, Err: sarama.ErrIncompleteResponse})
			case !errors.Is(b.Err, sarama.ErrNoError):
				errs = append(errs, &PartitionOffsetError{TopicPartition: tp, Err: fmt.Errorf("broker %d: %w", leader, b.Err)})
			case len(b.Offsets) > 0:
				out[tp] = b.Offsets[0]
			default:
				out[tp] = b.Offset
			}
		}
	}
	return out, errors.Join(errs...)
}

// leader returns the leader of tp from its partition state znode.
func (l *LogOffsets) leader(ctx context.Context, tp TopicPartition) (int32, error) {
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	path := zkbrokers.PartitionStatePath(tp.Topic, tp.Partition)
	data, _, err := l.zk.Get(ctx, path)
	if errors.Is(err, zksession.ErrNoNode) {
		if _, terr := TopicPartitions(ctx, l.zk, tp.Topic); errors.Is(terr, ErrUnknownTopic) {
			return 0, terr
		}
		return 0, fmt.Errorf("%w: no %s", ErrNoLeader, path)
	}
	if err != nil {
		return 0, err
	}
	st, err := zkbrokers.DecodePartitionState(path, data)
	if err != nil {
		return 0, err
	}
	if st.Leader == zkbrokers.NoLeader {
		return 0, fmt.Errorf("%w (leader -1)", ErrNoLeader)
	}
	return st.Leader, nil
}

// send sends req to broker id, connecting first if needed; a failed
// connection is dropped so that the next call dials again.
func (l *LogOffsets) send(ctx context.Context, id int32, req *sarama.OffsetRequest) (*sarama.OffsetResponse, error) {
	b, err := l.broker(ctx, id)
	if err != nil {
		return nil, err
	}
	type result struct {
		resp *sarama.OffsetResponse
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := b.GetAvailableOffsets(req)
		done <- result{resp, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			l.drop(id)
			return nil, fmt.Errorf("broker %d at %s: %w", id, b.Addr(), r.err)
		}
		return r.resp, nil
	case <-ctx.Done():
		l.drop(id) // closing unblocks the request within the read timeout
		<-done
		return nil, fmt.Errorf("broker %d at %s: %w", id, b.Addr(), context.Cause(ctx))
	}
}

func (l *LogOffsets) drop(id int32) {
	l.mu.Lock()
	b := l.conns[id]
	delete(l.conns, id)
	l.mu.Unlock()
	if b != nil {
		_ = b.Close()
	}
}

// broker returns a connection to broker id, opening it if needed.
func (l *LogOffsets) broker(ctx context.Context, id int32) (*sarama.Broker, error) {
	l.mu.Lock()
	b := l.conns[id]
	l.mu.Unlock()
	if b != nil {
		return b, nil
	}
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	path := zkbrokers.BrokerIDPath(id)
	data, _, err := l.zk.Get(ctx, path)
	if errors.Is(err, zksession.ErrNoNode) {
		return nil, fmt.Errorf("%w: leader %d is not registered under %s", ErrNoLeader, id, zkbrokers.BrokerIDsPath)
	}
	if err != nil {
		return nil, err
	}
	info, err := zkbrokers.DecodeBroker(id, path, data)
	if err != nil && !errors.Is(err, zkbrokers.ErrNoPlaintextEndpoint) {
		return nil, err
	}
	ep, err := l.sec.Endpoint(info)
	if err != nil {
		return nil, err
	}
	b = sarama.NewBroker(ep.Addr())
	if err := b.Open(l.conf); err != nil {
		return nil, fmt.Errorf("cannot reach broker %d at %s: %w", id, b.Addr(), l.sec.Explain(err))
	}
	// Connected waits for Open's goroutine, which is bounded by the dial
	// timeout.
	if ok, err := b.Connected(); !ok {
		_ = b.Close()
		if err == nil {
			err = sarama.ErrNotConnected
		}
		return nil, fmt.Errorf("cannot reach broker %d at %s: %w", id, b.Addr(), l.sec.Explain(err))
	}
	l.mu.Lock()
	l.conns[id] = b
	l.mu.Unlock()
	return b, nil
}
