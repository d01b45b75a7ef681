package zkassign

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/zkconsumer/zkconsumer/zkutil"
)

// th is shorthand for a thread id in tests.
func th(consumer string, n int) zkutil.ConsumerThreadID {
	return zkutil.ConsumerThreadID{ConsumerID: consumer, Thread: n}
}

// threadsOf returns threads 0..n-1 of consumer.
func threadsOf(consumer string, n int) []zkutil.ConsumerThreadID {
	out := make([]zkutil.ConsumerThreadID, n)
	for i := range out {
		out[i] = th(consumer, i)
	}
	return out
}

// partitions returns 0..n-1.
func partitions(n int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(i)
	}
	return out
}

// mustAssign runs a on ctx and fails the test on error.
func mustAssign(t *testing.T, a Assignor, ctx AssignmentContext) Assignment {
	t.Helper()
	got, err := a.Assign(ctx)
	if err != nil {
		t.Fatalf("%s.Assign: %v", a.Name(), err)
	}
	return got
}

// owners flattens an assignment to partition -> owner thread string.
func owners(a Assignment) map[zkutil.TopicPartition]string {
	out := map[zkutil.TopicPartition]string{}
	for _, tps := range a {
		for tp, id := range tps {
			out[tp] = id.String()
		}
	}
	return out
}

// dump renders an assignment as sorted "member: topic-p=thread" lines, so
// that a mismatch is easy to read.
func dump(a Assignment) string {
	var lines []string
	for member, tps := range a {
		if len(tps) == 0 {
			lines = append(lines, member+": (none)")
		}
		for tp, id := range tps {
			lines = append(lines, fmt.Sprintf("%s: %s=%s", member, tp, id))
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// assertSameAssignment fails the test if got and want differ.
func assertSameAssignment(t *testing.T, got, want Assignment, msg string, args ...any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s\ngot:\n%s\nwant:\n%s", fmt.Sprintf(msg, args...), dump(got), dump(want))
	}
}

// assertOwners fails the test unless the partitions of topic are owned as
// listed: want[i] is the thread string owning partition i.
func assertOwners(t *testing.T, a Assignment, topic string, want []string) {
	t.Helper()
	got := owners(a)
	for p, w := range want {
		tp := zkutil.TopicPartition{Topic: topic, Partition: int32(p)}
		if got[tp] != w {
			t.Errorf("%s: owner %q, want %q", tp, got[tp], w)
		}
	}
	n := 0
	for tp := range got {
		if tp.Topic == topic {
			n++
		}
	}
	if n != len(want) {
		t.Errorf("topic %s: %d partitions assigned, want %d", topic, n, len(want))
	}
}
