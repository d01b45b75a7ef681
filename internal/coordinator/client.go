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
var ErrGroupActive = errors.New("the group has members in Kafka")

// Client speaks to the coordinator of one group. It finds the coordinator
// (Locator), keeps one connection to it, negotiates the versions it sends
// (OffsetFetch v1, OffsetCommit v2, DescribeGroups v0: clientNeeds), and
// finds it again after a coordinator error or a lost connection. It is
// safe for concurrent use.
type Client struct {
	group   string
	retries int
	backoff time.Duration
	loc     *Locator
	reset   func() // ends the connections with a TCP reset; nil: closes them

	mu    sync.Mutex
	coord *conn
}

// conn is the Client's connection to the coordinator.
type conn struct {
	name     string // BrokerName
	id       int32
	addr     string
	b        *sarama.Broker
	versions Versions
}

// clientNeeds is what a Client sends to the coordinator: the versions of
// Kafka's old consumer with offsets.storage=kafka (OffsetCommit 2 keeps
// the retention time; its generation -1 and no member id commit from
// outside the group).
var clientNeeds = []Need{
	{API: APIOffsetFetch, Range: Range{Min: 1, Max: 1}},
	{API: APIOffsetCommit, Range: Range{Min: 2, Max: 2}},
	{API: APIDescribeGroups, Range: Range{Min: 0, Max: 0}},
}

// New returns a Client for group. newClient connects to the cluster, with
// Metadata.Full off; the coordinator is found through it (Locator) and
// dialled with its settings. Each request is tried up to 1+retries times,
// backoff apart, after errors of a coordinator that moved, is loading the
// group, or cannot be reached (Retry).
func New(group string, newClient func() (sarama.Client, error), retries int, backoff time.Duration, opts ...Option) *Client {
	c := &Client{group: group, retries: retries, backoff: backoff,
		loc: NewLocator(group, "the cluster", newClient, nil)}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Option configures a Client.
type Option func(*Client)

// WithReset gives the Client a way to end its connections with a TCP
// reset, such as abortdial.Dialer.Reset for the dialer newClient's clients
// dial with: a fenced commit uses it (see CommitFenced). Without it, the
// Client closes its connections instead, which may still let the kernel
// deliver what it holds of a request.
func WithReset(reset func()) Option { return func(c *Client) { c.reset = reset } }

// Close closes the connections to the cluster. The Client reconnects if
// used again.
func (c *Client) Close() error {
	c.mu.Lock()
	coord := c.coord
	c.coord = nil
	c.mu.Unlock()
	if coord != nil {
		_ = coord.b.Close()
	}
	c.loc.Disconnect()
	return nil
}

// coordinator returns the connection to the coordinator, finding and
// connecting it first if needed. A coordinator that speaks none of the
// versions of a request the Client sends fails for good (an
// *UnsupportedError naming it).
func (c *Client) coordinator() (*conn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.coord != nil {
		return c.coord, nil
	}
	found, err := c.loc.Find()
	if err != nil {
		if errors.Is(err, ErrFindRefused) {
			return nil, Permanent(err)
		}
		return nil, err
	}
	cfg := c.loc.Config()
	if cfg == nil {
		return nil, errors.New("disconnected from the coordinator")
	}
	co := &conn{name: BrokerName(found.ID(), found.Addr()), id: found.ID(), addr: found.Addr(), b: sarama.NewBroker(found.Addr())}
	if err := co.b.Open(cfg); err != nil && !errors.Is(err, sarama.ErrAlreadyConnected) {
		return nil, fmt.Errorf("connect to the coordinator, %s: %w", co.name, err)
	}
	have, err := ApiVersions(co.b)
	if err != nil {
		_ = co.b.Close()
		return nil, fmt.Errorf("connect to the coordinator, %s: %w", co.name, err)
	}
	if co.versions, err = Negotiate(co.name, have, clientNeeds...); err != nil {
		_ = co.b.Close()
		return nil, Permanent(err)
	}
	c.coord = co
	return co, nil
}

// drop forgets co, closing it, so that the next request finds the
// coordinator again.
func (c *Client) drop(co *conn) {
	c.mu.Lock()
	if c.coord == co {
		c.coord = nil
	}
	c.mu.Unlock()
	_ = co.b.Close()
}

// recheck looks the coordinator up again and drops the connection to the
// current one if another broker holds the group now; it keeps it when
// the answer names the same broker or none comes.
func (c *Client) recheck() {
	c.mu.Lock()
	co := c.coord
	c.mu.Unlock()
	if co == nil {
		return
	}
	if found, err := c.loc.Find(); err == nil && (found.ID() != co.id || found.Addr() != co.addr) {
		c.drop(co)
	}
}

// retry runs op against the coordinator under Retry's rule, finding it
// first, and again after errors of a coordinator that moved or a lost
// connection.
func (c *Client) retry(ctx context.Context, op func(*conn) error) error {
	return Retry(ctx, 1+c.retries, c.backoff, func() error {
		co, err := c.coordinator()
		if err != nil {
			return err
		}
		err = op(co)
		var kerr sarama.KError
		switch {
		case Moved(err):
			c.drop(co)
		case errors.As(err, &kerr) && grouperr.CoordinatorSuspect(kerr):
			c.recheck()
		}
		return err
	})
}

// Moved reports whether err, an error of a request to the coordinator,
// calls for finding the coordinator again: a coordinator error of
// grouperr.CoordinatorMoved, or a failure of the connection (any error
// that is neither a Kafka error nor marked Permanent).
func Moved(err error) bool {
	var kerr sarama.KError
	if errors.As(err, &kerr) {
		return grouperr.CoordinatorMoved(kerr)
	}
	return Retriable(err)
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
	}, c.recheck)
	if err != nil {
		return nil, nil, fmt.Errorf("fetch offsets of group %s from Kafka: %w", c.group, err)
	}
	return offsets, failed, nil
}

// fetch is one OffsetFetch of tps, retried on coordinator errors.
func (c *Client) fetch(ctx context.Context, tps []zkutil.TopicPartition) (offsets map[zkutil.TopicPartition]int64, failed map[zkutil.TopicPartition]error, err error) {
	offsets = make(map[zkutil.TopicPartition]int64, len(tps))
	if len(tps) == 0 {
		return offsets, nil, nil
	}
	err = c.retry(ctx, func(co *conn) error {
		v, _ := co.versions.Of(APIOffsetFetch)
		resp, err := co.b.FetchOffset(OffsetFetchRequest(v, c.group, tps))
		if err != nil {
			return err
		}
		var bad map[zkutil.TopicPartition]sarama.KError
		offsets, bad, err = ReadOffsets(resp, tps)
		if err != nil {
			return err
		}
		failed = nil
		for tp, kerr := range bad {
			if failed == nil {
				failed = map[zkutil.TopicPartition]error{}
			}
			failed[tp] = fmt.Errorf("committed offset of %s in Kafka (group %s): %w", tp, c.group, kerr)
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
	return c.commit(ctx, nil, offsets)
}

// CommitFenced is Commit made only while fence holds: each attempt starts
// only if fence holds (else it fails with ErrFenced, nothing sent), and a
// request still unanswered when fence lapses is cut off with a TCP reset
// (see WithReset). A broker that has already received the request may
// still apply it: Kafka offers no fencing of commits from outside a group.
func (c *Client) CommitFenced(ctx context.Context, fence Fence, offsets map[zkutil.TopicPartition]int64) error {
	if fence == nil {
		return errors.New("a fenced commit needs a fence")
	}
	return c.commit(ctx, fence, offsets)
}

// commit is Commit, fenced by fence unless it is nil.
func (c *Client) commit(ctx context.Context, fence Fence, offsets map[zkutil.TopicPartition]int64) error {
	if len(offsets) == 0 {
		return nil
	}
	err := c.retry(ctx, func(co *conn) error {
		v, _ := co.versions.Of(APIOffsetCommit)
		req := &sarama.OffsetCommitRequest{
			Version:                 v,
			ConsumerGroup:           c.group,
			ConsumerGroupGeneration: sarama.GroupGenerationUndefined,
			RetentionTime:           -1,
		}
		for tp, off := range offsets {
			req.AddBlock(tp.Topic, tp.Partition, off, 0, "")
		}
		resp, err := fenced(c, fence, func() (*sarama.OffsetCommitResponse, error) { return co.b.CommitOffset(req) })
		if errors.Is(err, ErrFenced) {
			return Permanent(err)
		}
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
					return Permanent(fmt.Errorf("%s: %w (%w)", tp, ErrGroupActive, kerr))
				case grouperr.Retriable(kerr):
					return kerr
				default:
					errs = append(errs, fmt.Errorf("%s: %w", tp, kerr))
				}
			}
		}
		return Permanent(errors.Join(errs...))
	})
	if err != nil {
		return fmt.Errorf("commit offsets of group %s to Kafka: %w", c.group, err)
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
	err := c.retry(ctx, func(co *conn) error {
		v, _ := co.versions.Of(APIDescribeGroups)
		resp, err := co.b.DescribeGroups(&sarama.DescribeGroupsRequest{Version: v, Groups: []string{c.group}})
		if err != nil {
			return err
		}
		if len(resp.Groups) != 1 {
			return Permanent(fmt.Errorf("DescribeGroups answered %d groups for one", len(resp.Groups)))
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
		return GroupState{}, fmt.Errorf("describe group %s: %w", c.group, err)
	}
	return st, nil
}
