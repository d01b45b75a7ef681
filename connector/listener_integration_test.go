package connector

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// listenerLedger is a RebalanceListener that keeps what its member was
// told it owns (the partitions it gained less those it released since)
// and every call, and notes each call that breaks the listener's promise:
// a call with nothing in it, a release of a partition the member does not
// own, a gain of one it owns already, a partition of another topic.
type listenerLedger struct {
	topic string

	mu         sync.Mutex
	owned      map[int32]bool
	calls      []ledgerCall
	partial    bool // a release left the member some partitions (cooperative)
	violations []string
}

// ledgerCall is one call: "release" or "start", its partitions of the
// topic, and lost.
type ledgerCall struct {
	kind  string
	parts []int32
	lost  bool
}

var _ RebalanceListener = (*listenerLedger)(nil)

func newListenerLedger(topic string) *listenerLedger {
	return &listenerLedger{topic: topic, owned: map[int32]bool{}}
}

func (l *listenerLedger) check(kind string, m map[string][]int32) []int32 {
	if len(m) == 0 {
		l.violations = append(l.violations, kind+" called with nothing")
	}
	for topic, parts := range m {
		if topic != l.topic || len(parts) == 0 || !slices.IsSorted(parts) {
			l.violations = append(l.violations, fmt.Sprintf("%s told %v", kind, m))
		}
	}
	return slices.Clone(m[l.topic])
}

// BeforeReleasingPartitions records that the member gives released up.
func (l *listenerLedger) BeforeReleasingPartitions(_ context.Context, _ *ConsumerConnector, released map[string][]int32, lost bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	parts := l.check("release", released)
	for _, p := range parts {
		if !l.owned[p] {
			l.violations = append(l.violations, fmt.Sprintf("released %d, not owned (%v)", p, l.ownedLocked()))
		}
		delete(l.owned, p)
	}
	if len(l.owned) > 0 {
		l.partial = true
	}
	l.calls = append(l.calls, ledgerCall{kind: "release", parts: parts, lost: lost})
}

// BeforeStartingFetchers records that the member gains gained.
func (l *listenerLedger) BeforeStartingFetchers(_ context.Context, _ *ConsumerConnector, gained map[string][]int32) {
	l.mu.Lock()
	defer l.mu.Unlock()
	parts := l.check("start", gained)
	for _, p := range parts {
		if l.owned[p] {
			l.violations = append(l.violations, fmt.Sprintf("gained %d, already owned", p))
		}
		l.owned[p] = true
	}
	l.calls = append(l.calls, ledgerCall{kind: "start", parts: parts})
}

func (l *listenerLedger) ownedLocked() []int32 { return slices.Sorted(maps.Keys(l.owned)) }

// snapshot returns what the member was told it owns, its calls and its
// violations.
func (l *listenerLedger) snapshot() (owned []int32, calls []ledgerCall, partial bool, violations []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ownedLocked(), slices.Clone(l.calls), l.partial, slices.Clone(l.violations)
}

// listenerMember is one member of a listener test: its connector and
// its listener.
type listenerMember struct {
	name   string
	conn   *ConsumerConnector
	ledger *listenerLedger
}

// waitLedgersMatch waits until members own, between them, each of the
// topic's partitions once, each some, with no rebalance in progress, and
// each member's listener's ledger (gains less losses) equals its
// Assignment(). It returns each member's partitions.
func waitLedgersMatch(t *testing.T, topic string, partitions int32, members ...listenerMember) map[string][]int32 {
	t.Helper()
	var last string
	var owners map[string][]int32
	ok := func() bool {
		owners = map[string][]int32{}
		var all []int32
		for _, m := range members {
			a := m.conn.Assignment()
			if a.Err != nil {
				last = fmt.Sprintf("%s: %v", m.name, a.Err)
				return false
			}
			owned, _, _, _ := m.ledger.snapshot()
			if !slices.Equal(owned, a.Partitions[topic]) {
				last = fmt.Sprintf("%s: the listener says %v, Assignment %v", m.name, owned, a.Partitions[topic])
				return false
			}
			if len(owned) == 0 {
				last = fmt.Sprintf("%s owns nothing yet", m.name)
				return false
			}
			owners[m.name] = owned
			all = append(all, owned...)
		}
		slices.Sort(all)
		if int32(len(all)) != partitions || int32(len(slices.Compact(all))) != partitions {
			last = fmt.Sprintf("partitions owned: %v", owners)
			return false
		}
		return true
	}
	deadline := time.Now().Add(90 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("listeners and Assignment did not settle: %s", last)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, m := range members {
		_, _, _, violations := m.ledger.snapshot()
		require.Empty(t, violations, "%s's listener", m.name)
	}
	return owners
}

// TestListenerIsToldOwnGainsAndLosses: in every mode and protocol
// (ZooKeeper eager and cooperative; Kafka classic eager with range,
// classic cooperative-sticky, and group.protocol=consumer), each of two
// members' listeners is told its own gains and losses only, never a call
// with nothing in it, and after each rebalance the gains less the losses
// each listener was told equal the member's Assignment(). Under an eager
// protocol every release gives up everything the member owns; under a
// cooperative one a member that keeps partitions is told only about
// those that move. Shutdown makes one call, BeforeReleasingPartitions
// with everything the member owns and lost false, and no
// BeforeStartingFetchers call.
func TestListenerIsToldOwnGainsAndLosses(t *testing.T) {
	t.Parallel()
	type mode struct {
		name        string
		cooperative bool
		cluster     func(testing.TB) *testcluster.Cluster
		config      func(c *testcluster.Cluster, group string) Config
	}
	modes := []mode{
		{"zookeeper/eager", false, testcluster.Shared, func(c *testcluster.Cluster, group string) Config {
			cfg := testConfig(c, group)
			cfg.RebalanceProtocol = RebalanceEager
			return cfg
		}},
		{"zookeeper/cooperative", true, testcluster.Shared, func(c *testcluster.Cluster, group string) Config {
			cfg := testConfig(c, group)
			cfg.RebalanceProtocol = RebalanceCooperative
			return cfg
		}},
		{"kafka/classic-range", false, testcluster.Shared, func(c *testcluster.Cluster, group string) Config {
			cfg := kafkaConfig(c, group)
			cfg.PartitionAssignmentStrategy = []AssignmentStrategy{StrategyRange}
			return cfg
		}},
		{"kafka/classic-cooperative-sticky", true, testcluster.Shared, func(c *testcluster.Cluster, group string) Config {
			cfg := kafkaConfig(c, group)
			cfg.PartitionAssignmentStrategy = []AssignmentStrategy{StrategyCooperativeSticky}
			return cfg
		}},
		{"kafka/consumer", true, testcluster.SharedKRaft, consumerProtocolConfig},
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			c := m.cluster(t)
			const partitions = 6
			topic := newTopic(t, c, partitions, 0)
			group := testcluster.UniqueName("g-ledger")
			cfg := m.config(c, group)
			ctx := testwait.Context(t, 4*time.Minute)
			join := func(name string) listenerMember {
				cfg := cfg
				cfg.ConsumerID = name + "-" + group
				l := newListenerLedger(topic)
				conn, err := New(ctx, cfg, WithRebalanceListener(l))
				require.NoError(t, err)
				t.Cleanup(func() { _ = conn.Shutdown(context.Background()) })
				_, err = conn.CreateMessageStreams(ctx, map[string]int{topic: 2})
				require.NoError(t, err)
				return listenerMember{name: name, conn: conn, ledger: l}
			}

			a := join("a")
			owners := waitLedgersMatch(t, topic, partitions, a)
			require.Len(t, owners["a"], partitions)

			b := join("b")
			owners = waitLedgersMatch(t, topic, partitions, a, b)
			_, aCalls, aPartial, _ := a.ledger.snapshot()
			if m.cooperative {
				require.True(t, aPartial, "a kept partitions and was told only about those it gave up: %v", aCalls)
			} else {
				require.False(t, aPartial, "an eager release gives up everything: %v", aCalls)
				require.Equal(t, ledgerCall{kind: "start", parts: owners["a"]}, aCalls[len(aCalls)-1],
					"an eager member is told its whole new assignment")
			}

			// b's Shutdown: one release of everything b owns, not lost; a
			// gains it.
			_, before, _, _ := b.ledger.snapshot()
			shutdown(t, b.conn)
			_, after, _, _ := b.ledger.snapshot()
			require.Equal(t, []ledgerCall{{kind: "release", parts: owners["b"]}}, after[len(before):],
				"Shutdown's calls")
			owned, _, _, violations := b.ledger.snapshot()
			require.Empty(t, owned)
			require.Empty(t, violations)
			owners = waitLedgersMatch(t, topic, partitions, a)
			require.Len(t, owners["a"], partitions)

			_, before, _, _ = a.ledger.snapshot()
			shutdown(t, a.conn)
			_, after, _, _ = a.ledger.snapshot()
			require.Equal(t, []ledgerCall{{kind: "release", parts: owners["a"]}}, after[len(before):],
				"Shutdown's calls")
			_, _, _, violations = a.ledger.snapshot()
			require.Empty(t, violations)
		})
	}
}

// TestShutdownCommitsNothingWithAutoCommitOff: with
// auto.commit.enable=false Shutdown commits nothing itself, in either
// mode: the member's listener gets its one BeforeReleasingPartitions call
// (every partition, lost false), and a member that does not commit there
// or before leaves the group's committed offsets where they were (none
// here), though it consumed every message.
// TestListenerCommitsThroughTheConnectorItIsGiven shows the commit made
// in that call landing.
func TestShutdownCommitsNothingWithAutoCommitOff(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, c *testcluster.Cluster, config func(string) Config) {
		const n = 30
		topic := newTopic(t, c, 3, n)
		group := testcluster.UniqueName("g-nocommit")
		cfg := config(group)
		cfg.AutoCommitEnable = false
		l := newListenerLedger(topic)
		ctx := testwait.Context(t, 3*time.Minute)
		conn, err := New(ctx, cfg, WithRebalanceListener(l))
		require.NoError(t, err)
		streams, err := conn.CreateMessageStreams(ctx, map[string]int{topic: 1})
		require.NoError(t, err)
		col := newCollector()
		col.read(ctx, "a", streams[topic][0])
		col.waitAll(t, 0, n, time.Minute)
		require.Eventually(t, func() bool {
			total := int64(0)
			for _, p := range conn.Stats().Partitions {
				total += p.ConsumedOffset
			}
			return total == n
		}, time.Minute, 20*time.Millisecond, "every message counts as consumed")
		_, before, _, _ := l.snapshot()
		shutdown(t, conn)
		col.wg.Wait()
		_, after, _, violations := l.snapshot()
		require.Empty(t, violations)
		require.Equal(t, []ledgerCall{{kind: "release", parts: []int32{0, 1, 2}}}, after[len(before):])
		var committed map[int32]int64
		if cfg.kafkaMode() {
			committed = kafkaCommitted(t, c, group, topic, 3)
		} else {
			committed = readOffsets(t, c, group, topic, 3)
		}
		require.Empty(t, committed, "Shutdown committed with auto.commit.enable=false")
	})
}
