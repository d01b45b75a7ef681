// Package zkbrokers reads the brokers' part of Kafka's ZooKeeper layout
// (/brokers): broker registrations with their listeners, topics' replica
// assignments and partitions' leader state, as brokers of Kafka 0.9 to 3.x
// in ZooKeeper mode write them.
//
// Every decoder reports garbage as a *zkutil.DecodeError naming the znode,
// never a panic; callers decide whether to skip the node.
package zkbrokers
