package connector

import "slices"

// checkStrategies returns why PartitionAssignmentStrategy does not suit
// the coordination mode, or "" if it does: in ZooKeeper mode one of range,
// roundrobin and sticky; in Kafka mode a list, in order of preference, of
// range, roundrobin and cooperative-sticky, each at most once.
func (c *Config) checkStrategies() string {
	list := c.PartitionAssignmentStrategy
	for _, s := range list {
		if _, ok := strategyEnum.name(uint8(s)); !ok {
			return strategyEnum.reason()
		}
	}
	if !c.kafkaMode() {
		if len(list) != 1 || list[0] == StrategyCooperativeSticky {
			return "must be one of range, roundrobin, sticky"
		}
		return ""
	}
	if len(list) == 0 {
		return "must list range, roundrobin or cooperative-sticky (comma-separated, in order of preference)"
	}
	for i, s := range list {
		if s == StrategySticky {
			return "is zkconsumer's ZooKeeper-mode strategy; with " + keyGroupCoordination + "=" + CoordinationKafka.String() +
				" use range, roundrobin or cooperative-sticky"
		}
		if slices.Contains(list[:i], s) {
			return "lists " + s.String() + " twice"
		}
	}
	return ""
}

// kafkaAssignors returns the protocol names of PartitionAssignmentStrategy
// in Kafka mode, in order of preference, or why it is refused (the reason
// alone, for a ConfigError).
func (c *Config) kafkaAssignors() ([]string, string) {
	if reason := c.checkStrategies(); reason != "" {
		return nil, reason
	}
	list := c.PartitionAssignmentStrategy
	if len(list) == 0 {
		list = []AssignmentStrategy{StrategyRange}
	}
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = s.String()
	}
	return out, ""
}
