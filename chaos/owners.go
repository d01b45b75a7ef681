package chaos

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/zkconsumer/zkconsumer/internal/strategyname"
	"github.com/zkconsumer/zkconsumer/internal/topicfilter"
	"github.com/zkconsumer/zkconsumer/internal/zkassign"
	"github.com/zkconsumer/zkconsumer/internal/zkbrokers"
	"github.com/zkconsumer/zkconsumer/internal/zkgroup"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// OwnersCheck compares the partition owners in ZooKeeper with the
// assignment the assignor computes for the registered members (the sticky
// assignor from the group's sticky_assignment node, see stickyNode), and
// the registered members with the member processes running.
type OwnersCheck struct {
	// Converged is true once ZooKeeper and the assignor agreed.
	Converged bool `json:"converged"`
	// WaitedMs is how long the driver waited for agreement.
	WaitedMs int64 `json:"waited_ms"`
	// Registered are the children of /consumers/<group>/ids.
	Registered []string `json:"registered"`
	// Live maps the running incarnations to their consumer ids.
	Live map[string]string `json:"live"`
	// Expected and Actual map "topic-partition" to the owning thread.
	Expected map[string]string `json:"expected"`
	Actual   map[string]string `json:"actual"`
	// Mismatches describe every difference found in the last reading.
	Mismatches []string `json:"mismatches"`
	// Err is set when ZooKeeper could not be read.
	Err string `json:"err,omitempty"`
}

// groupReader reads what the owner check needs from ZooKeeper.
type groupReader interface {
	Children(ctx context.Context, path string) ([]string, error)
	Get(ctx context.Context, path string) ([]byte, zksession.Stat, error)
}

// readOwners makes one reading and comparison.
func readOwners(ctx context.Context, zk groupReader, group, strategy string, live map[string]string) OwnersCheck {
	check := OwnersCheck{Live: live, Expected: map[string]string{}, Actual: map[string]string{}}
	view, err := expectedOwners(ctx, zk, group, strategy)
	if err != nil {
		check.Err = err.Error()
		check.Mismatches = []string{"cannot read the group: " + err.Error()}
		return check
	}
	registered := view.registered
	check.Registered = registered
	for tp, th := range view.expected {
		check.Expected[tp.String()] = th.String()
	}
	actual := map[zkutil.TopicPartition]string{}
	for _, t := range view.topics {
		parts, err := zk.Children(ctx, zkutil.OwnersTopicPath(group, t))
		if errors.Is(err, zksession.ErrNoNode) {
			continue
		}
		if err != nil {
			check.Err = err.Error()
			check.Mismatches = append(check.Mismatches, fmt.Sprintf("cannot list owners of %s: %v", t, err))
			continue
		}
		for _, p := range parts {
			data, _, err := zk.Get(ctx, zkutil.OwnersTopicPath(group, t)+"/"+p)
			if errors.Is(err, zksession.ErrNoNode) {
				continue
			}
			if err != nil {
				check.Mismatches = append(check.Mismatches, fmt.Sprintf("cannot read owner of %s-%s: %v", t, p, err))
				continue
			}
			check.Actual[t+"-"+p] = string(data)
			if n, err := strconv.ParseInt(p, 10, 32); err == nil {
				actual[zkutil.TopicPartition{Topic: t, Partition: int32(n)}] = string(data)
			}
		}
	}
	for _, tp := range slices.Sorted(maps.Keys(check.Expected)) {
		want, got := check.Expected[tp], check.Actual[tp]
		switch {
		case got == "":
			check.Mismatches = append(check.Mismatches, fmt.Sprintf("%s has no owner; the assignor gives it to %s", tp, want))
		case got != want:
			check.Mismatches = append(check.Mismatches, fmt.Sprintf("%s is owned by %s; the assignor gives it to %s", tp, got, want))
		}
	}
	for _, tp := range slices.Sorted(maps.Keys(check.Actual)) {
		if _, ok := check.Expected[tp]; !ok {
			check.Mismatches = append(check.Mismatches, fmt.Sprintf("%s is owned by %s; the assignor gives it to nobody", tp, check.Actual[tp]))
		}
	}
	check.Mismatches = append(check.Mismatches, view.strangers...)
	if view.sticky != nil {
		check.Mismatches = append(check.Mismatches, view.sticky.mismatches(view, actual)...)
	}
	ids := map[string]bool{}
	for _, id := range registered {
		ids[id] = true
	}
	liveIDs := map[string]bool{}
	for _, key := range slices.Sorted(maps.Keys(live)) {
		id := live[key]
		liveIDs[id] = true
		if !ids[id] {
			check.Mismatches = append(check.Mismatches, fmt.Sprintf("running member %s (%s) is not registered", key, id))
		}
	}
	for _, id := range registered {
		if !liveIDs[id] {
			check.Mismatches = append(check.Mismatches, fmt.Sprintf("registration %s belongs to no running member", id))
		}
	}
	check.Converged = len(check.Mismatches) == 0
	return check
}

// groupView is the group as the owner check reads it from ZooKeeper.
type groupView struct {
	// expected maps every partition the group consumes to the thread the
	// assignor gives it.
	expected map[zkutil.TopicPartition]zkutil.ConsumerThreadID
	// registered are the members' ids (children of /consumers/<group>/ids),
	// sorted; topics the topics some member consumes, sorted.
	registered, topics []string
	// threadsForTopic holds every registered member's threads per topic.
	threadsForTopic map[string][]zkutil.ConsumerThreadID
	// strangers describe the members whose registration records another
	// strategy than the run's.
	strangers []string
	// sticky is the group's sticky_assignment node, read before the
	// members when the strategy is sticky; nil otherwise.
	sticky *stickyNode
}

// expectedOwners computes, from the registrations and topics in
// ZooKeeper, the owner of every partition the group consumes: each
// member's share as that member's own assignor (strategy) computes it.
// The sticky assignor computes from the group's previous assignment, which
// its members agree on through the group's sticky_assignment node; the
// check reads that node first, as a member does, and gives it as the
// previous assignment (see stickyNode for what is checked besides).
func expectedOwners(ctx context.Context, zk groupReader, group, strategy string) (groupView, error) {
	assignor, err := zkassign.NewAssignor(strategy)
	if err != nil {
		return groupView{}, err
	}
	var view groupView
	if strategy == strategyname.Sticky {
		if view.sticky, err = readStickyNode(ctx, zk, group); err != nil {
			return groupView{}, err
		}
	}
	ids, err := zk.Children(ctx, zkutil.ConsumerIDsPath(group))
	if err != nil {
		return groupView{}, fmt.Errorf("list members: %w", err)
	}
	slices.Sort(ids)
	allTopics, err := zk.Children(ctx, zkbrokers.BrokerTopicsPath)
	if err != nil {
		return groupView{}, fmt.Errorf("list topics: %w", err)
	}
	slices.Sort(allTopics)
	threads := map[string]map[string][]zkutil.ConsumerThreadID{}
	actx := zkassign.AssignmentContext{
		ConsumersForTopic:  map[string][]zkutil.ConsumerThreadID{},
		PartitionsForTopic: map[string][]int32{},
	}
	if view.sticky != nil {
		actx.Previous = view.sticky.owners
	}
	for _, id := range ids {
		path := zkutil.ConsumerIDPath(group, id)
		data, _, err := zk.Get(ctx, path)
		if err != nil {
			return groupView{}, fmt.Errorf("read %s: %w", path, err)
		}
		reg, err := zkutil.DecodeRegistration(path, data)
		if err != nil {
			return groupView{}, err
		}
		if reg.AssignmentStrategy != strategy {
			view.strangers = append(view.strangers, fmt.Sprintf("member %s registered with partition.assignment.strategy %q, not %q", id, reg.AssignmentStrategy, strategy))
		}
		sub, err := subscriptionOf(reg)
		if err != nil {
			return groupView{}, fmt.Errorf("%s: %w", path, err)
		}
		threads[id] = sub.ThreadIDs(id, allTopics, true)
		for t, ths := range threads[id] {
			actx.ConsumersForTopic[t] = append(actx.ConsumersForTopic[t], ths...)
		}
		actx.Consumers = append(actx.Consumers, id)
	}
	topics := slices.Sorted(maps.Keys(actx.ConsumersForTopic))
	for _, t := range topics {
		data, _, err := zk.Get(ctx, zkbrokers.TopicPath(t))
		if err != nil {
			return groupView{}, fmt.Errorf("read topic %s: %w", t, err)
		}
		parts, err := zkbrokers.DecodeTopicPartitions(t, zkbrokers.TopicPath(t), data)
		if err != nil {
			return groupView{}, err
		}
		actx.PartitionsForTopic[t] = zkbrokers.SortedPartitions(parts)
	}
	out := map[zkutil.TopicPartition]zkutil.ConsumerThreadID{}
	for _, id := range ids {
		actx.ConsumerID = id
		actx.MyTopicThreadIDs = threads[id]
		a, err := assignor.Assign(actx)
		if err != nil {
			return groupView{}, err
		}
		maps.Copy(out, a[id])
	}
	view.expected, view.registered, view.topics, view.threadsForTopic = out, ids, topics, actx.ConsumersForTopic
	return view, nil
}

// subscriptionOf rebuilds a member's subscription from its registration.
func subscriptionOf(reg zkutil.Registration) (zkgroup.Subscription, error) {
	if reg.Pattern == zkutil.PatternStatic {
		return zkgroup.StaticSubscription(reg.Subscription), nil
	}
	for regex, n := range reg.Subscription {
		f, err := topicfilter.New(reg.Pattern, regex)
		if err != nil {
			return zkgroup.Subscription{}, err
		}
		return zkgroup.WildcardSubscription(f, n), nil
	}
	return zkgroup.Subscription{}, errors.New("empty wildcard registration")
}

// kafkaOwners is the owner check of Kafka mode, where no owner nodes
// exist: every running member has reported an assignment (its rebalance
// listener), and those assignments cover every partition of the run's
// topics that some running member subscribes to, each exactly once.
func kafkaOwners(trk *tracker, live map[string]string, topics []topicInfo, t Topology, running []*process) OwnersCheck {
	check := OwnersCheck{Live: live, Expected: map[string]string{}, Actual: map[string]string{}}
	subscribed := map[string]bool{}
	for _, p := range running {
		key := p.Key()
		check.Registered = append(check.Registered, key)
		parts, ok := trk.assignment(key)
		if !ok {
			check.Mismatches = append(check.Mismatches, fmt.Sprintf("running member %s has no assignment", key))
		}
		for tp := range parts {
			if prev, dup := check.Actual[tp.String()]; dup {
				check.Mismatches = append(check.Mismatches, fmt.Sprintf("%s is assigned to %s and to %s", tp, prev, key))
			}
			check.Actual[tp.String()] = key
		}
		if t.wildcard(p.Slot) {
			for _, ti := range topics {
				subscribed[ti.Name] = true
			}
		} else if len(topics) > 0 {
			subscribed[topics[0].Name] = true
		}
	}
	for _, ti := range topics {
		if !subscribed[ti.Name] {
			continue
		}
		for p := range ti.Partitions {
			tp := topicPartition{ti.Name, int32(p)}
			check.Expected[tp.String()] = "one running member"
			if _, ok := check.Actual[tp.String()]; !ok {
				check.Mismatches = append(check.Mismatches, fmt.Sprintf("%s is assigned to no running member", tp))
			}
		}
	}
	slices.Sort(check.Mismatches)
	check.Converged = len(check.Mismatches) == 0
	return check
}
