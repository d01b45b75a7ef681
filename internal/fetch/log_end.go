package fetch

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/IBM/sarama"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// LogEnds reads the log-end offsets (high watermarks) of the partitions a
// ConsumerFetcherManager is fetching from their leaders, with ListOffsets,
// on connections of its own. The high watermark the fetch responses carry
// (the partition's HighWatermark) stops with the fetcher: one
// blocked on a full queue, or serving only paused partitions, sends no
// request, while the log goes on growing. LogEnds is how the connector
// keeps its lag true then.
//
// Each broker gets one connection, opened on first use with the manager's
// settings (Config.Sarama: TLS, SASL, the application's dialer) and closed
// by Close or after a failed request. Read and Close are safe for
// concurrent use; calls to Read take turns.
type LogEnds struct {
	m *ConsumerFetcherManager

	mu     sync.Mutex // held by Read and Close
	closed bool
	conns  map[string]*logEndConn // by address
}

// logEndConn is a connection of LogEnds; cancel closes it at once, even in
// the middle of a round trip (see dialer).
type logEndConn struct {
	b      *sarama.Broker
	cancel context.CancelFunc
}

func (c *logEndConn) close() {
	c.cancel()
	_ = c.b.Close()
}

// NewLogEnds returns a LogEnds for the partitions m fetches. It connects
// to nothing until Read.
func NewLogEnds(m *ConsumerFetcherManager) *LogEnds {
	return &LogEnds{m: m, conns: map[string]*logEndConn{}}
}

// Read asks the leader of every partition the manager is fetching now
// (paused ones included) for its log-end offset: the high watermark, as
// ListOffsets answers for the latest offset under read_uncommitted (what a
// fetch response carries as its high watermark, whatever
// Config.IsolationLevel says). Partitions without a leader yet are left
// out. Partitions whose leader could not answer are missing from the map,
// and err joins one error per broker or partition that failed. ctx bounds
// the whole call: when it ends, requests in flight are cut off by closing
// their connection.
func (l *LogEnds) Read(ctx context.Context) (map[zkutil.TopicPartition]int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, ErrClosed
	}
	out := map[zkutil.TopicPartition]int64{}
	var errs []error
	for addr, tps := range l.m.leaders() {
		if err := ctx.Err(); err != nil {
			errs = append(errs, context.Cause(ctx))
			break
		}
		resp, err := l.send(ctx, addr, tps)
		if err != nil {
			errs = append(errs, fmt.Errorf("log-end offsets from %s: %w", addr, err))
			continue
		}
		for _, tp := range tps {
			b := resp.GetBlock(tp.Topic, tp.Partition)
			switch {
			case b == nil:
				errs = append(errs, fmt.Errorf("log-end offset of %s from %s: %w", tp, addr, sarama.ErrIncompleteResponse))
			case !errors.Is(b.Err, sarama.ErrNoError):
				errs = append(errs, fmt.Errorf("log-end offset of %s from %s: %w", tp, addr, b.Err))
			case len(b.Offsets) > 0: // v0
				out[tp] = b.Offsets[0]
			case b.Offset >= 0: // v1+
				out[tp] = b.Offset
			}
		}
	}
	return out, errors.Join(errs...)
}

// Close closes the connections; Read then fails with ErrClosed. It is
// idempotent and returns nil.
func (l *LogEnds) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	for addr, c := range l.conns {
		c.close()
		delete(l.conns, addr)
	}
	return nil
}

// send sends one ListOffsets request for tps to addr and waits for its
// answer; when ctx ends first, the connection is closed, which ends the
// request at once.
func (l *LogEnds) send(ctx context.Context, addr string, tps []zkutil.TopicPartition) (*sarama.OffsetResponse, error) {
	c := l.conns[addr]
	if c == nil {
		// The connection outlives this call: its context is its own, tied
		// to ctx only while connecting.
		connCtx, cancel := context.WithCancel(context.Background())
		stop := context.AfterFunc(ctx, cancel)
		b, err := openBroker(connCtx, addr, l.m.sarama, 0, nil)
		stop()
		if err != nil {
			cancel()
			return nil, err
		}
		c = &logEndConn{b: b, cancel: cancel}
		l.conns[addr] = c
	}
	// Blocks are added at version 0 so that they carry maxNumOffsets = 1,
	// which sarama keeps only then; the version is raised afterwards and
	// sarama lowers it to what the broker speaks (as resetOffsets does).
	req := &sarama.OffsetRequest{Version: 0}
	for _, tp := range tps {
		req.AddBlock(tp.Topic, tp.Partition, sarama.OffsetNewest, 1)
	}
	req.Version = sarama.NewOffsetRequest(l.m.sarama.Version).Version
	stop := context.AfterFunc(ctx, c.cancel)
	resp, err := c.b.GetAvailableOffsets(req)
	if cut := !stop(); cut || err != nil {
		// Closed by ctx's end, or broken: the next call dials again.
		c.close()
		delete(l.conns, addr)
		if err != nil && cut {
			err = fmt.Errorf("%w (%w)", context.Cause(ctx), err)
		}
	}
	return resp, err
}

// leaders returns the partitions of the running generation that have a
// fetcher, by the address of their leader.
func (m *ConsumerFetcherManager) leaders() map[string][]zkutil.TopicPartition {
	m.mu.Lock()
	r := m.run
	m.mu.Unlock()
	if r == nil {
		return nil
	}
	r.mu.Lock()
	fetchers := make([]*fetcher, 0, len(r.fetchers))
	for _, f := range r.fetchers {
		fetchers = append(fetchers, f)
	}
	r.mu.Unlock()
	out := map[string][]zkutil.TopicPartition{}
	for _, f := range fetchers {
		f.mu.Lock()
		for tp, ps := range f.parts {
			if !ps.pti.Revoked() {
				out[f.addr] = append(out[f.addr], tp)
			}
		}
		f.mu.Unlock()
	}
	return out
}
