package zkassign

import (
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/zkconsumer/zkconsumer/internal/strategyname"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

func TestNewAssignor(t *testing.T) {
	tests := []struct {
		strategy string
		opts     []AssignorOption
		want     Assignor
	}{
		{"range", nil, RangeAssignor{}},
		{"range", []AssignorOption{WithRoundRobinHashFormat(HashFormatBracket)}, RangeAssignor{}},
		{"roundrobin", nil, RoundRobinAssignor{HashFormat: HashFormatDash}},
		{"roundrobin", []AssignorOption{WithRoundRobinHashFormat(HashFormatBracket)}, RoundRobinAssignor{HashFormat: HashFormatBracket}},
		{"roundrobin", []AssignorOption{nil}, RoundRobinAssignor{HashFormat: HashFormatDash}},
	}
	for _, tt := range tests {
		got, err := NewAssignor(tt.strategy, tt.opts...)
		if err != nil {
			t.Errorf("NewAssignor(%q): %v", tt.strategy, err)
			continue
		}
		if got != tt.want {
			t.Errorf("NewAssignor(%q) = %#v, want %#v", tt.strategy, got, tt.want)
		}
		if got.Name() != tt.strategy {
			t.Errorf("Name() = %q, want %q", got.Name(), tt.strategy)
		}
	}
}

func TestNewAssignorRejectsUnknownStrategy(t *testing.T) {
	for _, s := range []string{"", "Range", "round-robin", "fair", "cooperative-sticky", "Sticky"} {
		_, err := NewAssignor(s)
		if !errors.Is(err, strategyname.ErrUnknown) {
			t.Errorf("NewAssignor(%q) error = %v, want strategyname.ErrUnknown", s, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, `"range"`) || !strings.Contains(msg, `"roundrobin"`) {
			t.Errorf("error %q does not name the allowed values", msg)
		}
	}
	if _, err := NewAssignor("roundrobin", WithRoundRobinHashFormat(-1)); err == nil {
		t.Error("NewAssignor with an invalid hash format succeeded, want an error")
	}
}

// validContext is a small well-formed context for validation tests.
func validContext() AssignmentContext {
	return AssignmentContext{
		ConsumerID:         "c1",
		MyTopicThreadIDs:   map[string][]zkutil.ConsumerThreadID{"t": {th("c1", 0)}},
		ConsumersForTopic:  map[string][]zkutil.ConsumerThreadID{"t": {th("c1", 0), th("c2", 0)}},
		PartitionsForTopic: map[string][]int32{"t": {0, 1, 2}},
		Consumers:          []string{"c1", "c2"},
	}
}

func TestAssignRejectsInvalidContext(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*AssignmentContext)
	}{
		{"empty ConsumerID", func(c *AssignmentContext) { c.ConsumerID = "" }},
		{"thread without consumer id", func(c *AssignmentContext) {
			c.ConsumersForTopic["t"] = append(c.ConsumersForTopic["t"], th("", 1))
		}},
		{"negative thread number", func(c *AssignmentContext) {
			c.ConsumersForTopic["t"] = append(c.ConsumersForTopic["t"], th("c2", -1))
		}},
		{"my thread without consumer id", func(c *AssignmentContext) { c.MyTopicThreadIDs["t"] = []zkutil.ConsumerThreadID{th("", 0)} }},
		{"my thread of another member", func(c *AssignmentContext) { c.MyTopicThreadIDs["t"] = []zkutil.ConsumerThreadID{th("c2", 0)} }},
		{"empty topic in MyTopicThreadIDs", func(c *AssignmentContext) { c.MyTopicThreadIDs[""] = nil }},
		{"empty topic in ConsumersForTopic", func(c *AssignmentContext) { c.ConsumersForTopic[""] = nil }},
		{"empty topic in PartitionsForTopic", func(c *AssignmentContext) { c.PartitionsForTopic[""] = nil }},
		{"negative partition", func(c *AssignmentContext) { c.PartitionsForTopic["t"] = []int32{0, -1} }},
		{"empty member id", func(c *AssignmentContext) { c.Consumers = append(c.Consumers, "") }},
	}
	for _, a := range []Assignor{RangeAssignor{}, RoundRobinAssignor{}} {
		if _, err := a.Assign(validContext()); err != nil {
			t.Fatalf("%s: valid context rejected: %v", a.Name(), err)
		}
		for _, tt := range tests {
			ctx := validContext()
			tt.mutate(&ctx)
			got, err := a.Assign(ctx)
			if !errors.Is(err, ErrInvalidContext) {
				t.Errorf("%s, %s: error = %v, want ErrInvalidContext", a.Name(), tt.name, err)
			}
			if got != nil {
				t.Errorf("%s, %s: assignment %v returned with an error", a.Name(), tt.name, got)
			}
		}
	}
}

// cloneContext deep-copies ctx.
func cloneContext(ctx AssignmentContext) AssignmentContext {
	out := ctx
	out.MyTopicThreadIDs = maps.Clone(ctx.MyTopicThreadIDs)
	for k, v := range out.MyTopicThreadIDs {
		out.MyTopicThreadIDs[k] = slices.Clone(v)
	}
	out.ConsumersForTopic = maps.Clone(ctx.ConsumersForTopic)
	for k, v := range out.ConsumersForTopic {
		out.ConsumersForTopic[k] = slices.Clone(v)
	}
	out.PartitionsForTopic = maps.Clone(ctx.PartitionsForTopic)
	for k, v := range out.PartitionsForTopic {
		out.PartitionsForTopic[k] = slices.Clone(v)
	}
	out.Consumers = slices.Clone(ctx.Consumers)
	return out
}

// TestAssignDoesNotModifyContext checks that assignors sort copies, not the
// caller's slices.
func TestAssignDoesNotModifyContext(t *testing.T) {
	ctx := AssignmentContext{
		ConsumerID:       "c2",
		MyTopicThreadIDs: map[string][]zkutil.ConsumerThreadID{"t": {th("c2", 1), th("c2", 0)}},
		ConsumersForTopic: map[string][]zkutil.ConsumerThreadID{
			"t": {th("c2", 1), th("c1", 0), th("c2", 0), th("c1", 0)},
			"u": {th("c1", 0)},
		},
		PartitionsForTopic: map[string][]int32{"t": {3, 1, 2, 0, 1}, "u": {1, 0}},
		Consumers:          []string{"c2", "c1"},
	}
	before := cloneContext(ctx)
	for _, a := range []Assignor{RangeAssignor{}, RoundRobinAssignor{}, RoundRobinAssignor{HashFormat: HashFormatBracket}} {
		mustAssign(t, a, ctx)
		if !reflect.DeepEqual(ctx, before) {
			t.Fatalf("%s modified its input:\n got %+v\nwant %+v", a.Name(), ctx, before)
		}
	}
}

// TestAssignmentsAreIndependent checks that two results share no maps.
func TestAssignmentsAreIndependent(t *testing.T) {
	for _, a := range []Assignor{RangeAssignor{}, RoundRobinAssignor{}} {
		first := mustAssign(t, a, validContext())
		second := mustAssign(t, a, validContext())
		clear(first["c1"])
		if len(second["c1"]) == 0 {
			t.Errorf("%s: clearing one result changed another", a.Name())
		}
	}
}
