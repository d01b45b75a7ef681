// Package groups is the logic behind the zkconsumer-groups command: it reads
// and changes ZooKeeper-based consumer groups (/consumers/<group>) the way
// Kafka 1.1.1's kafka-consumer-groups.sh --zookeeper did, and asks the
// brokers registered in ZooKeeper for log offsets.
//
// Readers (ListGroups, ReadCommittedOffsets, ReadOwners, ListMembers,
// DescribeGroup) never panic on garbage in znodes: they return what they
// could read together with a *BadNodesError naming each bad node. Writers
// refuse to touch a group while members are registered (ErrGroupActive).
package groups
