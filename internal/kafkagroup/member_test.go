package kafkagroup

import (
	"context"
	"encoding/hex"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/topicfilter"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

func TestConfigValidate(t *testing.T) {
	f, err := topicfilter.New(zkutil.PatternWhitelist, "a.*")
	require.NoError(t, err)
	ok := Config{Brokers: []string{"b:9092"}, Group: "g", Topics: []string{"t"}}
	require.NoError(t, ok.Validate())
	for name, tc := range map[string]struct {
		mutate func(*Config)
		msg    string
	}{
		"no brokers":     {func(c *Config) { c.Brokers = nil }, "no brokers"},
		"no group":       {func(c *Config) { c.Group = "" }, "empty group.id"},
		"no topics":      {func(c *Config) { c.Topics = nil }, "without topics"},
		"both":           {func(c *Config) { c.Filter = f }, "one of Topics, a Filter or a TopicRegex"},
		"empty topic":    {func(c *Config) { c.Topics = []string{""} }, "empty topic name"},
		"sticky":         {func(c *Config) { c.Assignors = []string{"range", "sticky"} }, "unknown partition.assignment.strategy"},
		"java class":     {func(c *Config) { c.Assignors = []string{"org.apache.kafka.clients.consumer.CooperativeStickyAssignor"} }, "unknown partition.assignment.strategy"},
		"twice":          {func(c *Config) { c.Assignors = []string{"range", "range"} }, "listed twice"},
		"heartbeat":      {func(c *Config) { c.HeartbeatInterval = time.Minute }, "lower than session.timeout.ms"},
		"negative":       {func(c *Config) { c.RetryBackoff = -time.Second }, "retry.backoff.ms"},
		"sarama version": {func(c *Config) { c.Sarama = sarama.NewConfig(); c.Sarama.Version = sarama.V2_0_0_0 }, "at least 2.4.0"},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := ok
			tc.mutate(&cfg)
			require.ErrorContains(t, cfg.Validate(), tc.msg)
			_, err := New(cfg)
			require.Error(t, err)
		})
	}
}

// TestSubscriptionBytes pins the JoinGroup metadata to the layout of
// Java's ConsumerProtocol subscription v3, as Kafka 3.9's consumer sends
// it: version, topics, user data, owned partitions, generation id, rack
// id. An eager member's range subscription has null user data and owns
// nothing; a cooperative member's cooperative-sticky one carries the
// generation of its last assignment as user data (Java's
// CooperativeStickyAssignor) and the partitions it keeps, sorted.
func TestSubscriptionBytes(t *testing.T) {
	req := &sarama.JoinGroupRequest{}
	require.NoError(t, req.AddGroupProtocolMetadata("range", subscriptionMetadata("range", []string{"a", "bc"}, nil, -1, -1)))
	require.NoError(t, req.AddGroupProtocolMetadata("cooperative-sticky",
		subscriptionMetadata("cooperative-sticky", []string{"a", "bc"}, map[string][]int32{"bc": {2, 0}, "a": {}}, 7, 6)))
	want := "0003" + "00000002" + "000161" + "00026263" + "ffffffff" + "00000000" + "ffffffff" + "ffff"
	require.Equal(t, want, hex.EncodeToString(req.OrderedGroupProtocols[0].Metadata))
	want = "0003" + "00000002" + "000161" + "00026263" +
		"00000004" + "00000006" + // user data: generation 6
		"00000001" + "00026263" + "00000002" + "00000000" + "00000002" + // owned bc-0, bc-2
		"00000007" + "ffff" // generation 7, no rack
	require.Equal(t, want, hex.EncodeToString(req.OrderedGroupProtocols[1].Metadata))
}

// TestAssignmentBytes pins SyncGroup assignments to Java's ConsumerProtocol
// assignment v0, and reads them back.
func TestAssignmentBytes(t *testing.T) {
	req := &sarama.SyncGroupRequest{}
	require.NoError(t, req.AddGroupAssignmentMember("m", &sarama.ConsumerGroupMemberAssignment{Topics: map[string][]int32{"t": {1, 2}}}))
	buf := req.GroupAssignments[0].Assignment
	require.Equal(t, "0000"+"00000001"+"000174"+"00000002"+"00000001"+"00000002"+"ffffffff", hex.EncodeToString(buf))
	got, err := decodeAssignment(buf)
	require.NoError(t, err)
	require.Equal(t, map[string][]int32{"t": {1, 2}}, got)

	empty, err := decodeAssignment(nil)
	require.NoError(t, err)
	require.Empty(t, empty)

	// Java 3.9 sends assignment v3 (same fields); unsorted, duplicated
	// and empty entries are normalised.
	v3, _ := hex.DecodeString("0003" + "00000002" + "000174" + "00000003" + "00000002" + "00000000" + "00000002" + "000175" + "00000000" + "00000000")
	got, err = decodeAssignment(v3)
	require.NoError(t, err)
	require.Equal(t, map[string][]int32{"t": {0, 2}}, got)

	_, err = decodeAssignment([]byte{0, 0, 0})
	require.Error(t, err)
}

// TestDecodeJavaSubscriptionV3: the leader reads what a Java 3.9 member
// sends, subscription v3 with owned partitions, generation and rack, and a
// v1 subscription, whose generation comes from its cooperative-sticky
// user data, if any.
func TestDecodeJavaSubscriptionV3(t *testing.T) {
	meta, _ := hex.DecodeString("0003" + "00000001" + "000174" + "ffffffff" +
		"00000001" + "000174" + "00000001" + "00000000" + // owned t-0
		"00000005" + "00027231") // generation 5, rack "r1"
	inst := "i-1"
	resp := &sarama.JoinGroupResponse{Members: []sarama.GroupMember{
		{MemberId: "java-1", GroupInstanceId: &inst, Metadata: meta},
		{MemberId: "zk-1", Metadata: mustHex(t, "0001"+"00000001"+"000174"+"ffffffff"+"00000000")},
		{MemberId: "old-1", Metadata: mustHex(t, "0001"+"00000001"+"000174"+"00000004"+"00000003"+"00000001"+"000174"+"00000001"+"00000001")},
	}}
	got, err := decodeMembers(resp)
	require.NoError(t, err)
	require.Equal(t, map[string]memberSubscription{
		"java-1": {Topics: []string{"t"}, InstanceID: "i-1", Owned: map[string][]int32{"t": {0}}, Generation: 5},
		"zk-1":   {Topics: []string{"t"}, Generation: -1},
		"old-1":  {Topics: []string{"t"}, Owned: map[string][]int32{"t": {1}}, Generation: 3},
	}, got)
}

func FuzzDecodeAssignment(f *testing.F) {
	f.Add(mustHex(f, "0000"+"00000001"+"000174"+"00000002"+"00000001"+"00000002"+"ffffffff"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := decodeAssignment(b)
		if err == nil {
			for _, ps := range a {
				require.NotEmpty(t, ps)
			}
		}
	})
}

func mustHex(t testing.TB, s string) []byte {
	b, err := hex.DecodeString(s)
	require.NoError(t, err)
	return b
}

// silentBroker accepts connections and never answers, like a hung broker.
func silentBroker(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		wg.Wait()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
	})
	return ln.Addr().String()
}

// TestCloseAbortsJoin: Close returns promptly while Join waits on a broker
// that does not answer, and Join then returns ErrMemberClosed.
func TestCloseAbortsJoin(t *testing.T) {
	m, err := New(Config{Brokers: []string{silentBroker(t)}, Group: "g", Topics: []string{"t"},
		RequestTimeout: time.Minute})
	require.NoError(t, err)
	joined := make(chan error, 1)
	go func() {
		_, err := m.Join(context.Background())
		joined <- err
	}()
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	require.NoError(t, m.Close())
	require.Less(t, time.Since(start), 5*time.Second)
	select {
	case err := <-joined:
		require.ErrorIs(t, err, ErrMemberClosed)
	case <-time.After(5 * time.Second):
		t.Fatal("Join did not return after Close")
	}
	require.NoError(t, m.Close(), "Close is idempotent")
	_, err = m.Join(context.Background())
	require.ErrorIs(t, err, ErrMemberClosed)
	require.ErrorIs(t, m.Commit(context.Background(), &Generation{}, map[zkutil.TopicPartition]int64{{Topic: "t"}: 1}), ErrMemberClosed)
}

// TestJoinContextCancelled: Join gives up when its context ends, and the
// member stays usable (Close works).
func TestJoinContextCancelled(t *testing.T) {
	m, err := New(Config{Brokers: []string{silentBroker(t)}, Group: "g", Topics: []string{"t"},
		RequestTimeout: 500 * time.Millisecond})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	_, err = m.Join(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.False(t, errors.Is(err, ErrMemberClosed))
	require.NoError(t, m.Close())
}

func TestCloseWithoutJoin(t *testing.T) {
	m, err := New(Config{Brokers: []string{"127.0.0.1:1"}, Group: "g", Topics: []string{"t"}})
	require.NoError(t, err)
	require.NoError(t, m.Close())
	require.NoError(t, m.Close())
	require.Nil(t, m.Generation())
	require.Empty(t, m.MemberID())
}

// TestCooperativeOnlyWhenEveryAssignorIs: as Java's ConsumerCoordinator
// decides, a member runs the cooperative protocol only when every assignor
// it lists supports it; Kafka 3.x's default list [range,
// cooperative-sticky] keeps it eager.
func TestCooperativeOnlyWhenEveryAssignorIs(t *testing.T) {
	for _, tc := range []struct {
		assignors []string
		want      bool
	}{
		{[]string{"cooperative-sticky"}, true},
		{[]string{"range", "cooperative-sticky"}, false},
		{[]string{"cooperative-sticky", "roundrobin"}, false},
		{[]string{"range"}, false},
		{nil, false},
	} {
		m, err := New(Config{Brokers: []string{"localhost:1"}, Group: "g", Topics: []string{"t"}, Assignors: tc.assignors})
		require.NoError(t, err)
		require.Equal(t, tc.want, m.classic.cooperative, "%v", tc.assignors)
		require.NoError(t, m.Close())
	}
}
