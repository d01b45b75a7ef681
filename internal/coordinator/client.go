package coordinator

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/grouperr"
	"github.com/zkconsumer/zkconsumer/internal/offsetfetch"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// ErrGroupActive is returned when the group has members in Kafka: its
// offsets belong to them, and the coordinator refuses commits from outside.
var ErrGroupActive = errors.New("coordinator: the group has members in Kafka")

// Client speaks to the coordinator of one group. It connects on first use
// and again after a failure; it is safe for concurrent use.
type Client struct {
	group     string
	retries   int
	backoff   time.Duration
	newClient func() (sarama.Client, error)
	reset     func() // ends the connections with a TCP reset; nil: closes the client

	mu     sync.Mutex
	client sarama.Client
}

// New returns a Client for group. newClient connects to the cluster; each
// request is tried up to 1+retries times, backoff apart, after errors of a
// coordinator that moved, is loading the group, or cannot be reached.
func New(group string, newClient func() (sarama.Client, error), retries int, backoff time.Duration, opts ...Option) *Client {
	c := &Client{group: group, newClient: newClient, retries: retries, backoff: backoff}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Option configures a Client.
type Option func(*Client)

// WithReset gives the Client a way to end its connections with a TCP
// reset, such as abortdial.Dialer.Reset for the dialer newClient's clients
// dial with: a fenced commit uses it (see WithFence). Without it, the
// Client closes its sarama client instead, which may still let the kernel
// deliver what it holds of a request.
func WithReset(reset func()) Option { return func(c *Client) { c.reset = reset } }

// Close closes the connections to the cluster. The Client reconnects if
// used again.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.client == nil {
		return nil
	}
	err := c.client.Close()
	c.client = nil
	return err
}

func (c *Client) coordinator() (*sarama.Broker, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.client == nil || c.client.Closed() {
		cl, err := c.newClient()
		if err != nil {
			return nil, fmt.Errorf("connect: %w", err)
		}
		c.client = cl
	}
	b, err := c.client.Coordinator(c.group)
	if err != nil {
		return nil, fmt.Errorf("find the coordinator: %w", err)
	}
	return b, nil
}

func (c *Client) refresh() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.client != nil {
		_ = c.client.RefreshCoordinator(c.group)
	}
}

// retry runs op against the coordinator until it succeeds, fails for good,
// or the retries run out, finding the coordinator again in between.
func (c *Client) retry(ctx context.Context, op func(*sarama.Broker) error) error {
	var err error
	for attempt := 0; attempt <= c.retries; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return errors.Join(err, context.Cause(ctx))
			case <-time.After(c.backoff):
			}
			c.refresh()
		}
		var b *sarama.Broker
		if b, err = c.coordinator(); err == nil {
			if err = op(b); err == nil {
				return nil
			}
		}
		if !retriable(err) {
			return err
		}
	}
	return err
}

// retriable reports the errors after which a request is repeated with the
// coordinator looked up again: a moved or loading coordinator, timeouts,
// and failures to connect or of the connection.
func retriable(err error) bool {
	if errors.Is(err, ErrGroupActive) || errors.Is(err, ErrFenced) {
		return false
	}
	var kerr sarama.KError
	if errors.As(err, &kerr) {
		return grouperr.Retriable(kerr)
	}
	return true
}

// Fetch returns the group's committed offset of each partition,
// zkutil.NoOffset where it has none (OffsetFetch v1). Partitions for which
// Kafka reports an error of their own are left out of offsets and returned
// in failed; err fails the whole fetch.
//
// An answer of "no committed offset" is confirmed by a second OffsetFetch
// of those partitions, to the coordinator looked up again (see
// internal/offsetfetch): Kafka's coordinator checks that it coordinates
// the group and then reads the group's offsets, and a coordinator that
// resigns between the two (its group unloaded) answers "none" without an
// error for a group that has offsets. Taken as true, a new owner would
// start from its own older progress or auto.offset.reset (seen in the
// chaos suite during a coordinator move).
func (c *Client) Fetch(ctx context.Context, tps []zkutil.TopicPartition) (offsets map[zkutil.TopicPartition]int64, failed map[zkutil.TopicPartition]error, err error) {
	offsets, err = offsetfetch.Confirmed(ctx, tps, c.backoff, func(tps []zkutil.TopicPartition) (map[zkutil.TopicPartition]int64, error) {
		got, bad, err := c.fetch(ctx, tps)
		if len(bad) > 0 && failed == nil {
			failed = make(map[zkutil.TopicPartition]error, len(bad))
		}
		maps.Copy(failed, bad) // a partition asked again was not in failed
		return got, err
	}, c.refresh)
	if err != nil {
		return nil, nil, fmt.Errorf("coordinator: fetch offsets of group %s from Kafka: %w", c.group, err)
	}
	return offsets, failed, nil
}

// fetch is one OffsetFetch of tps, retried on coordinator errors.
func (c *Client) fetch(ctx context.Context, tps []zkutil.TopicPartition) (offsets map[zkutil.TopicPartition]int64, failed map[zkutil.TopicPartition]error, err error) {
	offsets = make(map[zkutil.TopicPartition]int64, len(tps))
	if len(tps) == 0 {
		return offsets, nil, nil
	}
	err = c.retry(ctx, func(b *sarama.Broker) error {
		clear(offsets)
		failed = nil
		req := &sarama.OffsetFetchRequest{Version: 1, ConsumerGroup: c.group}
		for _, tp := range tps {
			req.AddPartition(tp.Topic, tp.Partition)
		}
		resp, err := b.FetchOffset(req)
		if err != nil {
			return err
		}
		if resp.Err != sarama.ErrNoError {
			return resp.Err
		}
		for _, tp := range tps {
			blk := resp.GetBlock(tp.Topic, tp.Partition)
			switch {
			case blk == nil:
				offsets[tp] = zkutil.NoOffset
			case blk.Err == sarama.ErrNoError:
				offsets[tp] = max(blk.Offset, zkutil.NoOffset) // -1 when the group has none
			case grouperr.Retriable(blk.Err):
				// Version 1 reports coordinator errors per partition;
				// they concern the whole request, which is retried.
				return blk.Err
			default:
				if failed == nil {
					failed = map[zkutil.TopicPartition]error{}
				}
				failed[tp] = fmt.Errorf("coordinator: committed offset of %s in Kafka (group %s): %w", tp, c.group, blk.Err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return offsets, failed, nil
}

// Commit writes offsets for the group from outside it (OffsetCommit v2,
// generation -1, no member id), kept for the broker's default retention.
// Partitions Kafka refuses are reported together in the error.
func (c *Client) Commit(ctx context.Context, offsets map[zkutil.TopicPartition]int64) error {
	if len(offsets) == 0 {
		return nil
	}
	fence := fenceFrom(ctx)
	err := c.retry(ctx, func(b *sarama.Broker) error {
		req := &sarama.OffsetCommitRequest{
			Version:                 2,
			ConsumerGroup:           c.group,
			ConsumerGroupGeneration: sarama.GroupGenerationUndefined,
			RetentionTime:           -1,
		}
		for tp, off := range offsets {
			req.AddBlock(tp.Topic, tp.Partition, off, 0, "")
		}
		resp, err := fenced(c, fence, func() (*sarama.OffsetCommitResponse, error) { return b.CommitOffset(req) })
		if err != nil {
			return err
		}
		var errs []error
		for topic, parts := range resp.Errors {
			for p, kerr := range parts {
				tp := zkutil.TopicPartition{Topic: topic, Partition: p}
				switch {
				case kerr == sarama.ErrNoError:
				case grouperr.Fenced(kerr):
					return fmt.Errorf("%s: %w (%w)", tp, ErrGroupActive, kerr)
				case grouperr.Retriable(kerr):
					return kerr
				default:
					errs = append(errs, fmt.Errorf("%s: %w", tp, kerr))
				}
			}
		}
		return errors.Join(errs...)
	})
	if err != nil {
		return fmt.Errorf("coordinator: commit offsets of group %s to Kafka: %w", c.group, err)
	}
	return nil
}

// GroupState is the coordinator's view of the group.
type GroupState struct {
	// State is Kafka's group state: Empty, Stable, PreparingRebalance,
	// CompletingRebalance, or Dead for a group the coordinator does not
	// know.
	State string
	// Members are the ids of the group's members in Kafka, sorted.
	Members []string
}

// Active reports whether the group has members in Kafka.
func (s GroupState) Active() bool {
	return len(s.Members) > 0 || (s.State != "Empty" && s.State != "Dead")
}

// Describe returns the group's state (DescribeGroups).
func (c *Client) Describe(ctx context.Context) (GroupState, error) {
	var st GroupState
	err := c.retry(ctx, func(b *sarama.Broker) error {
		resp, err := b.DescribeGroups(&sarama.DescribeGroupsRequest{Groups: []string{c.group}})
		if err != nil {
			return err
		}
		if len(resp.Groups) != 1 {
			return fmt.Errorf("DescribeGroups answered %d groups for one", len(resp.Groups))
		}
		g := resp.Groups[0]
		if g.Err != sarama.ErrNoError {
			return g.Err
		}
		st = GroupState{State: g.State}
		for id := range g.Members {
			st.Members = append(st.Members, id)
		}
		slices.Sort(st.Members)
		return nil
	})
	if err != nil {
		return GroupState{}, fmt.Errorf("coordinator: describe group %s: %w", c.group, err)
	}
	return st, nil
}
