package connector

import (
	"fmt"
	"slices"
	"strings"
)

// javaAssignorClasses maps the class names Java's consumer accepts in
// partition.assignment.strategy to the protocol names of the assignors.
var javaAssignorClasses = map[string]string{
	"org.apache.kafka.clients.consumer.RangeAssignor":             StrategyRange,
	"org.apache.kafka.clients.consumer.RoundRobinAssignor":        StrategyRoundRobin,
	"org.apache.kafka.clients.consumer.CooperativeStickyAssignor": StrategyCooperativeSticky,
}

// kafkaAssignors reads partition.assignment.strategy in Kafka mode: a
// comma-separated list, in order of preference, as Java's consumer takes
// it, of StrategyRange, StrategyRoundRobin and StrategyCooperativeSticky,
// or of the class names of Java's assignors for them; blanks around the
// names are ignored. It returns the protocol names, or why the value is
// refused (the reason alone, for a ConfigError).
func kafkaAssignors(value string) ([]string, string) {
	var out []string
	for _, field := range strings.Split(value, ",") {
		name := strings.TrimSpace(field)
		if class, ok := javaAssignorClasses[name]; ok {
			name = class
		}
		switch name {
		case StrategyRange, StrategyRoundRobin, StrategyCooperativeSticky:
		case StrategySticky:
			return nil, "is zkconsumer's ZooKeeper-mode strategy; with " + keyGroupCoordination + "=" + CoordinationKafka +
				" use range, roundrobin or cooperative-sticky"
		case "":
			return nil, "must list range, roundrobin or cooperative-sticky (comma-separated, in order of preference)"
		default:
			return nil, fmt.Sprintf("%q is not one of range, roundrobin, cooperative-sticky (or the class names of Java's RangeAssignor, RoundRobinAssignor, CooperativeStickyAssignor)", name)
		}
		if slices.Contains(out, name) {
			return nil, fmt.Sprintf("lists %s twice", name)
		}
		out = append(out, name)
	}
	return out, ""
}
