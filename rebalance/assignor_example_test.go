package rebalance_test

import (
	"fmt"
	"slices"

	"github.com/zkconsumer/zkconsumer/rebalance"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// The example from Kafka's RangeAssignor documentation: members C1 and C2
// with two streams each share five partitions of one topic.
func ExampleNewAssignor() {
	assignor, err := rebalance.NewAssignor("range")
	if err != nil {
		panic(err)
	}
	threads := []zkutil.ConsumerThreadID{
		{ConsumerID: "C1", Thread: 0}, {ConsumerID: "C1", Thread: 1},
		{ConsumerID: "C2", Thread: 0}, {ConsumerID: "C2", Thread: 1},
	}
	assignment, err := assignor.Assign(rebalance.AssignmentContext{
		ConsumerID:         "C1",
		MyTopicThreadIDs:   map[string][]zkutil.ConsumerThreadID{"t": threads[:2]},
		ConsumersForTopic:  map[string][]zkutil.ConsumerThreadID{"t": threads},
		PartitionsForTopic: map[string][]int32{"t": {0, 1, 2, 3, 4}},
		Consumers:          []string{"C1", "C2"},
	})
	if err != nil {
		panic(err)
	}
	var lines []string
	for _, owned := range assignment {
		for tp, thread := range owned {
			lines = append(lines, fmt.Sprintf("%s -> %s", tp, thread))
		}
	}
	slices.Sort(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
	// Output:
	// t-0 -> C1-0
	// t-1 -> C1-0
	// t-2 -> C1-1
	// t-3 -> C2-0
	// t-4 -> C2-1
}

// Kafka 0.8.2 to 0.11 members order roundrobin partitions by the hash of
// "[topic,partition]"; Go members sharing a group with them must do the same.
func ExampleWithRoundRobinHashFormat() {
	format, err := rebalance.ParseRoundRobinHashFormat("bracket")
	if err != nil {
		panic(err)
	}
	assignor, err := rebalance.NewAssignor("roundrobin", rebalance.WithRoundRobinHashFormat(format))
	if err != nil {
		panic(err)
	}
	fmt.Println(assignor.Name(), assignor.(rebalance.RoundRobinAssignor).HashFormat)
	// Output: roundrobin bracket
}
