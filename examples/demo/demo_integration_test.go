package main

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/connector"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// TestDemoOwnershipMatchesZooKeeper runs the demo's steps (A joins, B
// joins, A leaves) against a real cluster, under each rebalance protocol,
// and checks after every step that the ownership the demo printed is what
// the owner nodes in ZooKeeper say: each member's partitions and the
// stream (thread) of each.
func TestDemoOwnershipMatchesZooKeeper(t *testing.T) {
	cluster := testcluster.Shared(t)
	for _, protocol := range []connector.RebalanceProtocol{connector.RebalanceCooperative, connector.RebalanceEager} {
		t.Run(protocol.String(), func(t *testing.T) {
			out := &stepBuffer{}
			d := &demo{cluster: cluster, out: out, protocol: protocol}
			var steps []int
			d.afterStep = func(step int, group, topic string, members []*member) {
				steps = append(steps, step)
				printed := out.sinceLastStep()
				got := printedOwnership(printed)
				for _, m := range members {
					assert.Contains(t, got, m.name, "step %d: the demo printed no ownership of member %s:\n%s", step, m.name, printed)
				}
				want := zooKeeperOwnership(t, cluster, group, topic, members)
				assert.Equal(t, nonEmpty(want), nonEmpty(got),
					"step %d (%s): the ownership the demo printed differs from the owner nodes in ZooKeeper; it printed:\n%s", step, protocol, printed)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			require.NoError(t, d.run(ctx))
			require.Equal(t, []int{1, 2, 3}, steps, "the demo checks ownership after each of its three steps")
			if t.Failed() {
				t.Logf("demo output:\n%s", out.String())
			}
		})
	}
}

// ownershipRE matches the demo's ownership lines, "member A owns 2
// partitions: p0→stream 0, p1→stream 1" (or "owns no partitions: why").
var (
	ownershipRE = regexp.MustCompile(`member (\S+) owns (?:(\d+) partitions: (.*)|no partitions)`)
	partRE      = regexp.MustCompile(`p(\d+)→stream (\d+)`)
)

// printedOwnership parses the last ownership line printed for each member:
// member name -> partition -> stream.
func printedOwnership(text string) map[string]map[int32]int {
	got := map[string]map[int32]int{}
	for _, m := range ownershipRE.FindAllStringSubmatch(text, -1) {
		parts := map[int32]int{}
		for _, p := range partRE.FindAllStringSubmatch(m[3], -1) {
			partition, _ := strconv.Atoi(p[1])
			stream, _ := strconv.Atoi(p[2])
			parts[int32(partition)] = stream
		}
		got[m[1]] = parts
	}
	return got
}

// zooKeeperOwnership reads the owner nodes of group's topic, naming each
// owner by the demo member of its consumer id.
func zooKeeperOwnership(t *testing.T, cluster *testcluster.Cluster, group, topic string, members []*member) map[string]map[int32]int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := zksession.Dial(ctx, zksession.SessionConfig{Connect: cluster.ZKConnect(), SessionTimeout: 10 * time.Second})
	require.NoError(t, err)
	defer s.Close()
	names := map[string]string{}
	for _, m := range members {
		names[m.conn.ConsumerID()] = m.name
	}
	children, err := s.Children(ctx, zkutil.OwnersTopicPath(group, topic))
	require.NoError(t, err)
	owned := map[string]map[int32]int{}
	for _, child := range children {
		partition, err := strconv.Atoi(child)
		require.NoError(t, err)
		data, _, err := s.Get(ctx, zkutil.OwnerPath(group, topic, int32(partition)))
		require.NoError(t, err)
		th, err := zkutil.ParseConsumerThreadID(string(data))
		require.NoError(t, err)
		name, ok := names[th.ConsumerID]
		if !ok {
			name = "consumer " + th.ConsumerID + " (not a member still in the group)"
		}
		if owned[name] == nil {
			owned[name] = map[int32]int{}
		}
		owned[name][int32(partition)] = th.Thread
	}
	return owned
}

// nonEmpty drops the members that own nothing.
func nonEmpty(owned map[string]map[int32]int) map[string]map[int32]int {
	out := map[string]map[int32]int{}
	for name, parts := range owned {
		if len(parts) > 0 {
			out[name] = parts
		}
	}
	return out
}

// stepBuffer collects the demo's output, from several goroutines.
type stepBuffer struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	mark int // where the current step's output begins
}

func (b *stepBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *stepBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// sinceLastStep returns what was written since its last call.
func (b *stepBuffer) sinceLastStep() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.buf.String()[b.mark:]
	b.mark = b.buf.Len()
	return s
}
