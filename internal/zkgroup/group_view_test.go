package zkgroup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/strategyname"
	"github.com/zkconsumer/zkconsumer/internal/topicfilter"
	"github.com/zkconsumer/zkconsumer/internal/zkassign"
	"github.com/zkconsumer/zkconsumer/internal/zkbrokers"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// memZK is an in-memory ZooKeeper holding just what readGroup reads: node
// data by path; children are derived from the paths.
type memZK map[string][]byte

var _ groupReader = memZK(nil)

func (z memZK) Get(_ context.Context, path string) ([]byte, zksession.Stat, error) {
	data, ok := z[path]
	if !ok {
		return nil, zksession.Stat{}, zksession.ErrNoNode
	}
	return data, zksession.Stat{}, nil
}

func (z memZK) Children(_ context.Context, path string) ([]string, error) {
	var out []string
	for p := range z {
		if rest, ok := strings.CutPrefix(p, path+"/"); ok && !strings.Contains(rest, "/") {
			out = append(out, rest)
		}
	}
	if out == nil {
		return nil, zksession.ErrNoNode
	}
	return out, nil
}

// addTopic stores topic with n partitions on broker 1.
func (z memZK) addTopic(topic string, n int) {
	parts := map[string][]int{}
	for p := range n {
		parts[strconv.Itoa(p)] = []int{1}
	}
	data, _ := json.Marshal(map[string]any{"version": 1, "partitions": parts})
	z[zkbrokers.TopicPath(topic)] = data
}

// register stores a member's registration as given.
func (z memZK) register(group, id, data string) {
	z[zkutil.ConsumerIDPath(group, id)] = []byte(data)
}

// registerSub stores the registration sub writes.
func (z memZK) registerSub(t *testing.T, group, id string, sub Subscription) {
	t.Helper()
	data, err := zkutil.EncodeRegistration(sub.Registration(time.UnixMilli(1)))
	require.NoError(t, err)
	z[zkutil.ConsumerIDPath(group, id)] = data
}

// allocated returns the bytes f allocates on the heap.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// brokenPaths returns the member paths the broken errors name.
func brokenPaths(t *testing.T, broken []error) []string {
	t.Helper()
	var out []string
	for _, err := range broken {
		var de *zkutil.DecodeError
		if errors.As(err, &de) {
			out = append(out, de.Path)
			continue
		}
		_, rest, ok := strings.Cut(err.Error(), "member ")
		require.True(t, ok, "error names no member: %v", err)
		path, _, _ := strings.Cut(rest, " ")
		out = append(out, strings.TrimSuffix(path, ":"))
	}
	slices.Sort(out)
	return out
}

// TestReadGroupSkipsAbsurdRegistrations: a registration asking for 2^31-1
// streams (which every member would expand into 48 GiB of thread ids), or
// for a negative or zero count, or listing more topics than allowed, is
// reported as a broken registration of its member and left out; the rest of
// the group is read, and nothing large is allocated.
func TestReadGroupSkipsAbsurdRegistrations(t *testing.T) {
	const group = "g"
	z := memZK{}
	z.addTopic("t", 3)
	me := StaticSubscription(map[string]int{"t": 2})
	z.registerSub(t, group, "g_me", me)
	z.register(group, "g_ok", `{"version":1,"subscription":{"t":1},"pattern":"static","timestamp":"1"}`)
	z.register(group, "g_huge", `{"version":1,"subscription":{"t":2147483647},"pattern":"static","timestamp":"1"}`)
	z.register(group, "g_wild", `{"version":1,"subscription":{".*":2147483647},"pattern":"white_list","timestamp":"1"}`)
	z.register(group, "g_neg", `{"version":1,"subscription":{"t":-1},"pattern":"static","timestamp":"1"}`)
	z.register(group, "g_zero", `{"version":1,"subscription":{"t":0},"pattern":"static","timestamp":"1"}`)
	many, err := json.Marshal(map[string]any{"pattern": "static", "subscription": countedTopics(zkutil.MaxTopics+1, 1)})
	require.NoError(t, err)
	z.register(group, "g_many", string(many))

	var v groupView
	n := allocated(func() {
		v, err = readGroup(context.Background(), z, group, "g_me", me, true, strategyname.Range)
	})
	require.NoError(t, err)
	require.Less(t, n, uint64(64<<20), "readGroup allocated %d MiB", n>>20)

	path := func(id string) string { return zkutil.ConsumerIDPath(group, id) }
	require.Equal(t, []string{path("g_huge"), path("g_many"), path("g_neg"), path("g_wild"), path("g_zero")}, brokenPaths(t, v.broken))
	require.Equal(t, []string{"g_me", "g_ok"}, v.ctx.Consumers)
	require.Len(t, v.ctx.ConsumersForTopic["t"], 3)
	require.Equal(t, []int32{0, 1, 2}, v.ctx.PartitionsForTopic["t"])
	for _, err := range v.broken {
		require.NotContains(t, err.Error(), "g_ok")
	}
	require.ErrorContains(t, errors.Join(v.broken...), "stream count of \"t\" is 2147483647, more than the limit of 65536")
}

// TestReadGroupThreadBudget: the thread ids of the whole group, wildcards
// expanded, stay within zkutil.MaxThreads. The largest members are left
// out first (and reported), the same ones whichever member reads the group;
// a member whose own subscription is too large fails its rebalance.
func TestReadGroupThreadBudget(t *testing.T) {
	const group = "g"
	z := memZK{}
	for i := range 40 {
		z.addTopic(fmt.Sprintf("t%02d", i), 2)
	}
	wild := func(streams int) Subscription {
		f, err := topicfilter.New(zkutil.PatternWhitelist, "t.*")
		require.NoError(t, err)
		return WildcardSubscription(f, streams)
	}
	me := StaticSubscription(map[string]int{"t00": 1})
	z.registerSub(t, group, "g_me", me)
	z.registerSub(t, group, "g_small", wild(2))
	// Each within the per-registration limits, but 40 topics expand them
	// to 2,621,440 and 1,600,000 thread ids.
	z.registerSub(t, group, "g_max", wild(zkutil.MaxStreams))
	z.registerSub(t, group, "g_big", wild(40000))
	// Two of 400,000 fit together, the third is one too many; a tie is
	// broken by id.
	z.registerSub(t, group, "g_tie1", wild(10000))
	z.registerSub(t, group, "g_tie2", wild(10000))
	z.registerSub(t, group, "g_tie3", wild(10000))

	for _, reader := range []string{"g_me", "g_small", "g_tie3"} {
		mine, err := subscriptionOf(z, group, reader)
		require.NoError(t, err)
		var v groupView
		n := allocated(func() {
			v, err = readGroup(context.Background(), z, group, reader, mine, true, strategyname.Range)
		})
		require.NoError(t, err, "reader %s", reader)
		t.Logf("reader %s: readGroup allocated %d MiB", reader, n>>20)
		require.Less(t, n, uint64(512<<20), "reader %s allocated %d MiB", reader, n>>20)
		path := func(id string) string { return zkutil.ConsumerIDPath(group, id) }
		require.Equal(t, []string{path("g_big"), path("g_max"), path("g_tie1")}, brokenPaths(t, v.broken), "reader %s", reader)
		require.Equal(t, []string{"g_me", "g_small", "g_tie2", "g_tie3"}, v.ctx.Consumers, "reader %s", reader)
		var total int
		for _, ths := range v.ctx.ConsumersForTopic {
			total += len(ths)
		}
		require.Equal(t, 1+2*40+2*10000*40, total)
		require.LessOrEqual(t, total, zkutil.MaxThreads)
		require.ErrorContains(t, errors.Join(v.broken...), "expands into 2621440 thread ids")
	}
	// The assignors stay bounded too at the limit, range and roundrobin.
	mine, err := subscriptionOf(z, group, "g_me")
	require.NoError(t, err)
	v, err := readGroup(context.Background(), z, group, "g_me", mine, true, strategyname.Range)
	require.NoError(t, err)
	for _, a := range []zkassign.Assignor{zkassign.RangeAssignor{}, zkassign.RoundRobinAssignor{}} {
		n := allocated(func() { _, err = a.Assign(v.ctx) })
		require.NoError(t, err)
		t.Logf("%s: Assign allocated %d MiB", a.Name(), n>>20)
		require.Less(t, n, uint64(1<<30), "%s allocated %d MiB", a.Name(), n>>20)
	}

	mine, err = subscriptionOf(z, group, "g_max")
	require.NoError(t, err)
	_, err = readGroup(context.Background(), z, group, "g_max", mine, true, strategyname.Range)
	require.ErrorContains(t, err, "our own subscription expands into 2621440 thread ids, more than the group limit of 1048576")
}

// subscriptionOf reads back the subscription a member registered.
func subscriptionOf(z memZK, group, id string) (Subscription, error) {
	path := zkutil.ConsumerIDPath(group, id)
	reg, err := zkutil.DecodeRegistration(path, z[path])
	if err != nil {
		return Subscription{}, err
	}
	return subscriptionFromRegistration(reg)
}

// countedTopics returns n topics with streams streams each.
func countedTopics(n, streams int) map[string]int {
	sub := make(map[string]int, n)
	for i := range n {
		sub["t"+strconv.Itoa(i)] = streams
	}
	return sub
}

// TestSubscriptionLimits: Validate refuses what every member would refuse
// to read, and ThreadIDs neither panics nor allocates on counts it refuses.
func TestSubscriptionLimits(t *testing.T) {
	f, err := topicfilter.New(zkutil.PatternWhitelist, ".*")
	require.NoError(t, err)
	for _, tt := range []struct {
		sub  Subscription
		want string
	}{
		{StaticSubscription(map[string]int{"t": 2147483647}), `topic "t" with 2147483647 streams: at most 65536 are allowed`},
		{StaticSubscription(map[string]int{"t": -1}), `topic "t" with -1 streams: need at least 1`},
		{StaticSubscription(map[string]int{"t": 0}), `need at least 1`},
		{StaticSubscription(countedTopics(zkutil.MaxTopics+1, 1)), `subscription with 65537 topics: at most 65536 are allowed`},
		{StaticSubscription(countedTopics(17, zkutil.MaxStreams)), `subscription with 1114112 streams in all: at most 1048576 are allowed`},
		{WildcardSubscription(f, zkutil.MaxStreams+1), `wildcard subscription with 65537 streams: at most 65536 are allowed`},
		{WildcardSubscription(f, -5), `wildcard subscription with -5 streams: need at least 1`},
	} {
		require.ErrorContains(t, tt.sub.Validate(), tt.want)
		var ids map[string][]zkutil.ConsumerThreadID
		n := allocated(func() { ids = tt.sub.ThreadIDs("c", []string{"t", "u"}, true) })
		require.Less(t, n, uint64(32<<20))
		if len(tt.sub.Topics) <= 1 {
			require.Empty(t, ids)
		}
	}
	require.NoError(t, StaticSubscription(countedTopics(16, zkutil.MaxStreams)).Validate())
	require.NoError(t, WildcardSubscription(f, zkutil.MaxStreams).Validate())
}

// FuzzSubscriptionFromRegistration drives another member's registration
// from the bytes in ZooKeeper to the thread ids every member expands it
// into: no input panics, none expands beyond the limits, and threadCount,
// which decides what is left out before anything is allocated, agrees with
// ThreadIDs.
func FuzzSubscriptionFromRegistration(f *testing.F) {
	for _, s := range []string{
		`{"version":1,"subscription":{"t":2147483647},"pattern":"static","timestamp":"1"}`,
		`{"version":1,"subscription":{"t":65536,"u":1},"pattern":"static","timestamp":"1"}`,
		`{"version":1,"subscription":{"t.*":65536},"pattern":"white_list","timestamp":"1"}`,
		`{"version":1,"subscription":{"t.*,u":3},"pattern":"black_list","timestamp":"1"}`,
		`{"version":1,"subscription":{"[a-z&&[^aeiou]]+":1},"pattern":"white_list"}`,
		`{"version":1,"subscription":{"a{,3}":1},"pattern":"white_list"}`,
		`{"pattern":"static","subscription":{"t":-1}}`,
		`{"pattern":"static","subscription":{"t":0}}`,
	} {
		f.Add([]byte(s))
	}
	topics := []string{"__consumer_offsets", "a", "aaa", "t", "t1", "u", "xyz"}
	f.Fuzz(func(t *testing.T, data []byte) {
		reg, err := zkutil.DecodeRegistration("/consumers/g/ids/c", data)
		if err != nil {
			return
		}
		sub, err := subscriptionFromRegistration(reg)
		if err != nil {
			return
		}
		n := sub.threadCount(topics, true)
		if n > zkutil.MaxThreads {
			return // left out by readGroup before anything is allocated
		}
		var total int64
		for _, ths := range sub.ThreadIDs("c", topics, true) {
			total += int64(len(ths))
		}
		require.Equal(t, n, total)
	})
}
