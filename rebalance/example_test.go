package rebalance_test

import (
	"fmt"

	"github.com/zkconsumer/zkconsumer/rebalance"
)

// The example of Kafka's range strategy: members C1 and C2 with two
// streams each share five partitions of one topic.
func ExampleRange() {
	owners, err := rebalance.Range(rebalance.Group{
		Members:    map[string]map[string]int{"C1": {"t": 2}, "C2": {"t": 2}},
		Partitions: map[string][]int32{"t": {0, 1, 2, 3, 4}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for p := range int32(5) {
		fmt.Printf("t-%d -> %s\n", p, owners["t"][p])
	}
	// Output:
	// t-0 -> C1-0
	// t-1 -> C1-0
	// t-2 -> C1-1
	// t-3 -> C2-0
	// t-4 -> C2-1
}

// Kafka 1.0 changed the string whose hash orders roundrobin partitions:
// a group of Kafka 0.8.2 to 0.11 members deals them in another order.
func ExampleRoundRobin() {
	g := rebalance.Group{
		Members:    map[string]map[string]int{"A": {"events": 1}, "B": {"events": 2}},
		Partitions: map[string][]int32{"events": {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
	}
	for _, format := range []rebalance.HashFormat{rebalance.HashDash, rebalance.HashBracket} {
		owners, err := rebalance.RoundRobin(g, format)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Print(format, ":")
		for p := range int32(12) {
			fmt.Print(" ", owners["events"][p])
		}
		fmt.Println()
	}
	// Output:
	// dash: B-1 A-0 B-0 B-1 A-0 B-0 B-1 A-0 B-0 B-1 A-0 B-0
	// bracket: A-0 B-0 B-1 A-0 B-0 B-1 A-0 B-0 B-1 A-0 B-0 B-1
}
