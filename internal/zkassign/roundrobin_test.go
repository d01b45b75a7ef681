package zkassign

import (
	"errors"
	"testing"

	"github.com/zkconsumer/zkconsumer/zkutil"
)

// goldenGroupContext is the group of the reference's roundrobin golden
// vectors: grp_hostA-1-aaaaaaaa with one stream and grp_hostB-1-bbbbbbbb
// with two, both on topic "events" with 12 partitions.
func goldenGroupContext(me string) AssignmentContext {
	const a, b = "grp_hostA-1-aaaaaaaa", "grp_hostB-1-bbbbbbbb"
	return singleTopicContext(me, "events", 12, []string{b, a}, []int{2, 1})
}

func TestRoundRobinGoldenVectors(t *testing.T) {
	const (
		a0 = "grp_hostA-1-aaaaaaaa-0"
		b0 = "grp_hostB-1-bbbbbbbb-0"
		b1 = "grp_hostB-1-bbbbbbbb-1"
	)
	tests := []struct {
		format RoundRobinHashFormat
		hashes map[string]int32 // Java String.hashCode, checked with a JVM
		owners []string         // owner of events-0 .. events-11
	}{
		{
			format: HashFormatBracket,
			hashes: map[string]int32{"[events,0]": -670581339, "[events,9]": -670581339 + 9*31, "[events,10]": 686814630, "[events,11]": 686814661},
			// Hash order is 0..11.
			owners: []string{a0, b0, b1, a0, b0, b1, a0, b0, b1, a0, b0, b1},
		},
		{
			format: HashFormatDash,
			hashes: map[string]int32{"events-0": 278135932, "events-9": 278135941, "events-10": 32279379, "events-11": 32279380},
			// Hash order is 10, 11, 0..9.
			owners: []string{b1, a0, b0, b1, a0, b0, b1, a0, b0, b1, a0, b0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.format.String(), func(t *testing.T) {
			for s, want := range tt.hashes {
				if got := javaStringHash(s); got != want {
					t.Errorf("javaStringHash(%q) = %d, want %d", s, got, want)
				}
			}
			for _, me := range []string{"grp_hostA-1-aaaaaaaa", "grp_hostB-1-bbbbbbbb"} {
				a := mustAssign(t, RoundRobinAssignor{HashFormat: tt.format}, goldenGroupContext(me))
				assertOwners(t, a, "events", tt.owners)
			}
		})
	}
}

// TestRoundRobinMixedSubscriptions checks the ≥0.10.2 semantics: members
// subscribe to different topics, and the single cursor uses up the threads
// it passes over. Vectors computed with an emulation of the Scala code.
func TestRoundRobinMixedSubscriptions(t *testing.T) {
	ctx := AssignmentContext{
		ConsumerID:       "grp_m1",
		MyTopicThreadIDs: map[string][]zkutil.ConsumerThreadID{"t1": threadsOf("grp_m1", 2)},
		ConsumersForTopic: map[string][]zkutil.ConsumerThreadID{
			"t1": append(threadsOf("grp_m1", 2), th("grp_m2", 0)),
			"t2": {th("grp_m2", 0), th("grp_m3", 0)},
		},
		PartitionsForTopic: map[string][]int32{"t1": partitions(4), "t2": partitions(3)},
		Consumers:          []string{"grp_m1", "grp_m2", "grp_m3"},
	}
	// Ring: m1-0 m1-1 m2-0 m3-0. Hash order: t1-0..3, t2-0..2 in both formats.
	// t1-3 skips m3-0 (not on t1); t2-2 skips m1-0 and m1-1.
	for _, f := range []RoundRobinHashFormat{HashFormatDash, HashFormatBracket} {
		a := mustAssign(t, RoundRobinAssignor{HashFormat: f}, ctx)
		assertOwners(t, a, "t1", []string{"grp_m1-0", "grp_m1-1", "grp_m2-0", "grp_m1-0"})
		assertOwners(t, a, "t2", []string{"grp_m2-0", "grp_m3-0", "grp_m2-0"})
	}
}

// TestRoundRobinWildcardMember checks a wildcard member (the same threads
// on every topic) next to a member with a static subscription to one topic.
// Vectors computed with an emulation of the Scala code.
func TestRoundRobinWildcardMember(t *testing.T) {
	wild := threadsOf("wild", 2)
	ctx := AssignmentContext{
		ConsumerID:       "static",
		MyTopicThreadIDs: map[string][]zkutil.ConsumerThreadID{"b": {th("static", 0)}},
		ConsumersForTopic: map[string][]zkutil.ConsumerThreadID{
			"a": wild,
			"b": append([]zkutil.ConsumerThreadID{th("static", 0)}, wild...),
			"c": wild,
		},
		PartitionsForTopic: map[string][]int32{"a": partitions(3), "b": partitions(3), "c": partitions(2)},
		Consumers:          []string{"static", "wild"},
	}
	for _, f := range []RoundRobinHashFormat{HashFormatDash, HashFormatBracket} {
		a := mustAssign(t, RoundRobinAssignor{HashFormat: f}, ctx)
		assertOwners(t, a, "a", []string{"wild-0", "wild-1", "wild-0"})
		assertOwners(t, a, "b", []string{"wild-1", "static-0", "wild-0"})
		assertOwners(t, a, "c", []string{"wild-1", "wild-0"})
	}
}

// TestRoundRobinHashTiesAreDeterministic checks topics "Aa" and "BB", whose
// partitions hash alike in both formats: ties go in topic name order, on
// every run and whatever the input order.
func TestRoundRobinHashTiesAreDeterministic(t *testing.T) {
	for _, pair := range [][2]string{{"Aa-0", "BB-0"}, {"[Aa,0]", "[BB,0]"}, {"Aa-1", "BB-1"}} {
		if h0, h1 := javaStringHash(pair[0]), javaStringHash(pair[1]); h0 != h1 {
			t.Fatalf("javaStringHash(%q) = %d, javaStringHash(%q) = %d; want a tie", pair[0], h0, pair[1], h1)
		}
	}
	for _, f := range []RoundRobinHashFormat{HashFormatDash, HashFormatBracket} {
		for i := range 50 {
			members := []string{"x", "y"}
			topicThreads := []zkutil.ConsumerThreadID{th("x", 0), th("y", 0)}
			if i%2 == 1 {
				members = []string{"y", "x"}
				topicThreads = []zkutil.ConsumerThreadID{th("y", 0), th("x", 0)}
			}
			ctx := AssignmentContext{
				ConsumerID:         "x",
				MyTopicThreadIDs:   map[string][]zkutil.ConsumerThreadID{"BB": {th("x", 0)}, "Aa": {th("x", 0)}},
				ConsumersForTopic:  map[string][]zkutil.ConsumerThreadID{"BB": topicThreads, "Aa": topicThreads},
				PartitionsForTopic: map[string][]int32{"BB": {1, 0}, "Aa": {0, 1}},
				Consumers:          members,
			}
			// Order Aa-0, BB-0, Aa-1, BB-1 over the ring x-0, y-0.
			a := mustAssign(t, RoundRobinAssignor{HashFormat: f}, ctx)
			assertOwners(t, a, "Aa", []string{"x-0", "x-0"})
			assertOwners(t, a, "BB", []string{"y-0", "y-0"})
			if t.Failed() {
				t.Fatalf("format %v, run %d", f, i)
			}
		}
	}
}

// TestRoundRobinEdgeCases checks inputs Scala would choke on or that leave
// nothing to assign.
func TestRoundRobinEdgeCases(t *testing.T) {
	t.Run("no topics", func(t *testing.T) {
		a := mustAssign(t, RoundRobinAssignor{}, AssignmentContext{ConsumerID: "c", Consumers: []string{"c", "d"}})
		assertSameAssignment(t, a, Assignment{"c": {}, "d": {}}, "no topics")
	})
	t.Run("topics without threads are skipped", func(t *testing.T) {
		a := mustAssign(t, RoundRobinAssignor{}, AssignmentContext{
			ConsumerID:         "c",
			ConsumersForTopic:  map[string][]zkutil.ConsumerThreadID{"t": {th("c", 0)}, "empty": {}},
			PartitionsForTopic: map[string][]int32{"t": {0}, "empty": {0, 1}, "nobody": {0, 1}},
			Consumers:          []string{"c"},
		})
		assertSameAssignment(t, a, Assignment{"c": {{Topic: "t", Partition: 0}: th("c", 0)}}, "skipped topics")
	})
	t.Run("threads of partitionless topics stay on the ring", func(t *testing.T) {
		// Ring a-0, z-0; z-0 subscribes only to "u", which has no
		// partitions, so every partition of "t" goes to a-0.
		a := mustAssign(t, RoundRobinAssignor{}, AssignmentContext{
			ConsumerID:         "a",
			ConsumersForTopic:  map[string][]zkutil.ConsumerThreadID{"t": {th("a", 0)}, "u": {th("z", 0)}},
			PartitionsForTopic: map[string][]int32{"t": partitions(3)},
			Consumers:          []string{"a", "z"},
		})
		assertOwners(t, a, "t", []string{"a-0", "a-0", "a-0"})
		if m, ok := a["z"]; !ok || len(m) != 0 {
			t.Errorf("z entry = %v, %v; want an empty map", m, ok)
		}
	})
	t.Run("more threads than partitions", func(t *testing.T) {
		a := mustAssign(t, RoundRobinAssignor{}, singleTopicContext("c1", "t", 2, []string{"c1", "c2"}, []int{3, 3}))
		// Dash order: t-0, t-1 (hashes rise by one).
		assertOwners(t, a, "t", []string{"c1-0", "c1-1"})
		if m, ok := a["c2"]; !ok || len(m) != 0 {
			t.Errorf("c2 entry = %v, %v; want an empty map", m, ok)
		}
	})
}

func TestRoundRobinRejectsInvalidFormat(t *testing.T) {
	_, err := RoundRobinAssignor{HashFormat: 7}.Assign(goldenGroupContext("grp_hostA-1-aaaaaaaa"))
	if err == nil {
		t.Fatal("Assign with HashFormat 7 succeeded, want an error")
	}
}

func TestRoundRobinHashFormat(t *testing.T) {
	tests := []struct {
		f    RoundRobinHashFormat
		name string
		tp   string
	}{
		{HashFormatDash, "dash", "my.topic-12"},
		{HashFormatBracket, "bracket", "[my.topic,12]"},
	}
	for _, tt := range tests {
		if got := tt.f.String(); got != tt.name {
			t.Errorf("String() = %q, want %q", got, tt.name)
		}
		if got := tt.f.format("my.topic", 12); got != tt.tp {
			t.Errorf("%v.format = %q, want %q", tt.f, got, tt.tp)
		}
		if got, err := ParseRoundRobinHashFormat(tt.name); err != nil || got != tt.f {
			t.Errorf("ParseRoundRobinHashFormat(%q) = %v, %v; want %v", tt.name, got, err, tt.f)
		}
	}
	if got := HashFormatDash.format("t", 0); got != (zkutil.TopicPartition{Topic: "t"}).String() {
		t.Errorf("dash format %q differs from zkutil.TopicPartition.String", got)
	}
	if _, err := ParseRoundRobinHashFormat("Dash"); err == nil {
		t.Error(`ParseRoundRobinHashFormat("Dash") succeeded, want an error`)
	}
	if got := RoundRobinHashFormat(9).String(); got != "RoundRobinHashFormat(9)" {
		t.Errorf("String() of an invalid format = %q", got)
	}
}

func TestRoundRobinRejectsInvalidContext(t *testing.T) {
	ctx := goldenGroupContext("grp_hostA-1-aaaaaaaa")
	ctx.ConsumersForTopic["events"] = append(ctx.ConsumersForTopic["events"], th("", 0))
	_, err := RoundRobinAssignor{}.Assign(ctx)
	if !errors.Is(err, ErrInvalidContext) {
		t.Fatalf("Assign error = %v, want ErrInvalidContext", err)
	}
}
