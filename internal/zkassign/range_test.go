package zkassign

import (
	"errors"
	"testing"

	"github.com/zkconsumer/zkconsumer/zkutil"
)

// singleTopicContext builds the context member me sees when every member in
// streams subscribes to topic with the given number of streams.
func singleTopicContext(me, topic string, nParts int, members []string, streams []int) AssignmentContext {
	ctx := AssignmentContext{
		ConsumerID:         me,
		MyTopicThreadIDs:   map[string][]zkutil.ConsumerThreadID{},
		ConsumersForTopic:  map[string][]zkutil.ConsumerThreadID{},
		PartitionsForTopic: map[string][]int32{topic: partitions(nParts)},
		Consumers:          members,
	}
	for i, m := range members {
		ctx.ConsumersForTopic[topic] = append(ctx.ConsumersForTopic[topic], threadsOf(m, streams[i])...)
		if m == me {
			ctx.MyTopicThreadIDs[topic] = threadsOf(m, streams[i])
		}
	}
	return ctx
}

// TestRangeScaladocExample checks the example in Kafka's RangeAssignor
// documentation: C1 and C2 with two streams each over five partitions.
func TestRangeScaladocExample(t *testing.T) {
	for _, me := range []string{"C1", "C2"} {
		t.Run(me, func(t *testing.T) {
			a := mustAssign(t, RangeAssignor{}, singleTopicContext(me, "t", 5, []string{"C1", "C2"}, []int{2, 2}))
			assertOwners(t, a, "t", []string{"C1-0", "C1-0", "C1-1", "C2-0", "C2-1"})
			if len(a["C1"]) != 3 || len(a["C2"]) != 2 {
				t.Errorf("C1 owns %d, C2 owns %d; want 3 and 2", len(a["C1"]), len(a["C2"]))
			}
		})
	}
}

// TestRangeLexicographicThreadOrder checks that threads sort as strings:
// "g_c1-10" comes between "g_c1-1" and "g_c1-2".
func TestRangeLexicographicThreadOrder(t *testing.T) {
	a := mustAssign(t, RangeAssignor{}, singleTopicContext("g_c2", "t", 12, []string{"g_c1", "g_c2"}, []int{11, 1}))
	assertOwners(t, a, "t", []string{
		"g_c1-0", "g_c1-1", "g_c1-10", "g_c1-2", "g_c1-3", "g_c1-4",
		"g_c1-5", "g_c1-6", "g_c1-7", "g_c1-8", "g_c1-9", "g_c2-0",
	})
}

// TestRangeMoreThreadsThanPartitions checks that surplus threads, and a
// member left without any partition, get an empty share.
func TestRangeMoreThreadsThanPartitions(t *testing.T) {
	a := mustAssign(t, RangeAssignor{}, singleTopicContext("c2", "t", 3, []string{"c1", "c2"}, []int{3, 3}))
	assertOwners(t, a, "t", []string{"c1-0", "c1-1", "c1-2"})
	if m, ok := a["c2"]; !ok || len(m) != 0 {
		t.Errorf("c2 entry = %v, %v; want an empty map", m, ok)
	}
}

// TestRangeOnlyMyTopics checks that range assigns only the topics this
// member subscribes to, but every member's share of them. Vectors computed
// with an emulation of the Scala code.
func TestRangeOnlyMyTopics(t *testing.T) {
	base := AssignmentContext{
		ConsumersForTopic: map[string][]zkutil.ConsumerThreadID{
			"a": threadsOf("wild", 2),
			"b": append(threadsOf("wild", 2), th("static", 0)),
			"c": threadsOf("wild", 2),
		},
		PartitionsForTopic: map[string][]int32{"a": partitions(3), "b": partitions(3), "c": partitions(2)},
		Consumers:          []string{"static", "wild"},
	}

	wild := base
	wild.ConsumerID = "wild"
	wild.MyTopicThreadIDs = map[string][]zkutil.ConsumerThreadID{"a": threadsOf("wild", 2), "b": threadsOf("wild", 2), "c": threadsOf("wild", 2)}
	a := mustAssign(t, RangeAssignor{}, wild)
	assertOwners(t, a, "a", []string{"wild-0", "wild-0", "wild-1"})
	assertOwners(t, a, "b", []string{"static-0", "wild-0", "wild-1"})
	assertOwners(t, a, "c", []string{"wild-0", "wild-1"})

	static := base
	static.ConsumerID = "static"
	static.MyTopicThreadIDs = map[string][]zkutil.ConsumerThreadID{"b": {th("static", 0)}}
	s := mustAssign(t, RangeAssignor{}, static)
	assertOwners(t, s, "b", []string{"static-0", "wild-0", "wild-1"})
	assertOwners(t, s, "a", nil)
	assertOwners(t, s, "c", nil)
	if len(s["wild"]) != 2 {
		t.Errorf("wild's share of b as seen by static = %v, want 2 partitions", s["wild"])
	}
}

// TestRangeEdgeCases checks inputs Scala would choke on or that leave
// nothing to assign.
func TestRangeEdgeCases(t *testing.T) {
	me := []zkutil.ConsumerThreadID{th("c", 0)}
	tests := []struct {
		name string
		ctx  AssignmentContext
	}{
		{"no topics", AssignmentContext{ConsumerID: "c", Consumers: []string{"c", "d"}}},
		{"topic missing from PartitionsForTopic", AssignmentContext{
			ConsumerID:        "c",
			MyTopicThreadIDs:  map[string][]zkutil.ConsumerThreadID{"t": me},
			ConsumersForTopic: map[string][]zkutil.ConsumerThreadID{"t": me},
			Consumers:         []string{"c", "d"},
		}},
		{"topic with no partitions", AssignmentContext{
			ConsumerID:         "c",
			MyTopicThreadIDs:   map[string][]zkutil.ConsumerThreadID{"t": me},
			ConsumersForTopic:  map[string][]zkutil.ConsumerThreadID{"t": me},
			PartitionsForTopic: map[string][]int32{"t": {}},
			Consumers:          []string{"c", "d"},
		}},
		{"my topic without threads", AssignmentContext{
			ConsumerID:         "c",
			MyTopicThreadIDs:   map[string][]zkutil.ConsumerThreadID{"t": me},
			ConsumersForTopic:  map[string][]zkutil.ConsumerThreadID{"t": nil},
			PartitionsForTopic: map[string][]int32{"t": {0, 1}},
			Consumers:          []string{"c", "d"},
		}},
		{"my topic missing from ConsumersForTopic", AssignmentContext{
			ConsumerID:         "c",
			MyTopicThreadIDs:   map[string][]zkutil.ConsumerThreadID{"t": me},
			PartitionsForTopic: map[string][]int32{"t": {0, 1}},
			Consumers:          []string{"c", "d"},
		}},
	}
	want := Assignment{"c": {}, "d": {}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assertSameAssignment(t, mustAssign(t, RangeAssignor{}, tt.ctx), want, "%s", tt.name)
		})
	}
}

// TestRangeDeduplicatesInput checks that duplicated thread ids, members and
// partitions, in any order, give the same result as clean input.
func TestRangeDeduplicatesInput(t *testing.T) {
	clean := singleTopicContext("C1", "t", 5, []string{"C1", "C2"}, []int{2, 2})
	messy := AssignmentContext{
		ConsumerID:       "C1",
		MyTopicThreadIDs: map[string][]zkutil.ConsumerThreadID{"t": {th("C1", 1), th("C1", 0), th("C1", 1)}},
		ConsumersForTopic: map[string][]zkutil.ConsumerThreadID{
			"t": {th("C2", 1), th("C1", 0), th("C2", 0), th("C1", 1), th("C2", 1), th("C1", 0)},
		},
		PartitionsForTopic: map[string][]int32{"t": {4, 2, 0, 3, 1, 2, 4}},
		Consumers:          []string{"C2", "C1", "C2"},
	}
	assertSameAssignment(t, mustAssign(t, RangeAssignor{}, messy), mustAssign(t, RangeAssignor{}, clean), "messy input")
}

// TestRangeKeepsMembersMissingFromConsumers checks that a thread whose member
// is not (yet) in Consumers still gets its share, under its own entry.
func TestRangeKeepsMembersMissingFromConsumers(t *testing.T) {
	ctx := singleTopicContext("C1", "t", 4, []string{"C1", "C2"}, []int{1, 1})
	ctx.Consumers = []string{"C1"}
	a := mustAssign(t, RangeAssignor{}, ctx)
	assertOwners(t, a, "t", []string{"C1-0", "C1-0", "C2-0", "C2-0"})
}

func TestRangeRejectsInvalidContext(t *testing.T) {
	_, err := RangeAssignor{}.Assign(AssignmentContext{})
	if !errors.Is(err, ErrInvalidContext) {
		t.Fatalf("Assign(empty context) error = %v, want ErrInvalidContext", err)
	}
}
