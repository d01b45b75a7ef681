package kafkagroup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/topicfilter"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// testConfig is a fast-moving member of group on topics.
func testConfig(c *testcluster.Cluster, group string, topics ...string) Config {
	var logger *slog.Logger
	if os.Getenv("KAFKAGROUP_LOG") != "" {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return Config{
		Brokers:           c.BrokerAddrs(),
		Group:             group,
		Topics:            topics,
		SessionTimeout:    6 * time.Second, // the broker's group.min.session.timeout.ms
		HeartbeatInterval: 300 * time.Millisecond,
		RebalanceTimeout:  15 * time.Second,
		RetryBackoff:      50 * time.Millisecond,
		RequestTimeout:    10 * time.Second,
		Logger:            logger,
	}
}

// runner drives a Member as the connector will: Join, work until the
// generation ends, (commit,) Join again.
type runner struct {
	t      testing.TB
	m      *Member
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once

	mu   sync.Mutex
	gens []*Generation
	errs []error
	// onEnd, if set, runs when a generation ends, before the next Join.
	onEnd func(*Generation)
}

func startRunner(t testing.TB, cfg Config) *runner {
	t.Helper()
	m, err := New(cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	r := &runner{t: t, m: m, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		for ctx.Err() == nil {
			gen, err := m.Join(ctx)
			if err != nil {
				r.mu.Lock()
				r.errs = append(r.errs, err)
				r.mu.Unlock()
				if errors.Is(err, ErrFatal) || errors.Is(err, ErrMemberClosed) || ctx.Err() != nil {
					return
				}
				continue
			}
			r.mu.Lock()
			r.gens = append(r.gens, gen)
			r.mu.Unlock()
			select {
			case <-gen.Done():
				r.mu.Lock()
				onEnd := r.onEnd
				r.mu.Unlock()
				if onEnd != nil {
					onEnd(gen)
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	t.Cleanup(r.stop)
	return r
}

// stop closes the member (LeaveGroup) and waits for the runner.
func (r *runner) stop() {
	r.once.Do(func() {
		require.NoError(r.t, r.m.Close())
		r.cancel()
		<-r.done
	})
}

// crash stops the member as a killed process would: no more heartbeats,
// no LeaveGroup.
func (r *runner) crash() {
	r.once.Do(func() {
		r.m.mu.Lock()
		r.m.classic.memberID = "" // so that Close sends no LeaveGroup
		r.m.mu.Unlock()
		require.NoError(r.t, r.m.Close())
		r.cancel()
		<-r.done
	})
}

// live returns the current generation if it has not ended.
func (r *runner) live() *Generation {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.gens) == 0 {
		return nil
	}
	g := r.gens[len(r.gens)-1]
	if g.Err() != nil {
		return nil
	}
	return g
}

func (r *runner) generations() []*Generation {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.gens)
}

// settled reports whether every runner has a live generation of one id
// and together they own exactly the partitions want (topic -> count),
// each once.
func settled(want map[string]int32, rs ...*runner) bool {
	var id int32 = -1
	owned := map[string]int{}
	for _, r := range rs {
		g := r.live()
		if g == nil || (id >= 0 && g.ID != id) {
			return false
		}
		id = g.ID
		for topic, ps := range g.Assignment {
			for _, p := range ps {
				owned[fmt.Sprintf("%s/%d", topic, p)]++
			}
		}
	}
	n := 0
	for topic, count := range want {
		for p := range count {
			if owned[fmt.Sprintf("%s/%d", topic, p)] != 1 {
				return false
			}
			n++
		}
	}
	return n == len(owned)
}

// describe returns each member's assignment as the coordinator stores it
// (DescribeGroups), and the group's state.
func describe(t testing.TB, c *testcluster.Cluster, group string) (string, map[string]map[string][]int32) {
	t.Helper()
	state, members, err := c.DescribeGroup(group)
	require.NoError(t, err)
	return state, members
}

func createTopic(t testing.TB, c *testcluster.Cluster, prefix string, partitions int32) string {
	t.Helper()
	return testcluster.NewTopic(t, c, testcluster.TopicSpec{Prefix: prefix, Partitions: partitions})
}

func rebalanceFilter(regex string) (*topicfilter.Filter, error) {
	return topicfilter.New(zkutil.PatternWhitelist, regex)
}
