package zkgroup

import "github.com/zkconsumer/zkconsumer/zkutil"

// ownedNodes is what a member knows of the owner nodes it holds: for each
// partition, the node its session created (or read back as its own) and
// has not tried to delete since. It lets a release delete such a node
// without reading it first, with a delete conditional on the version it
// knows, bound to the session that holds the node.
//
// Why that is as safe as reading first: the delete is sent only on the
// connection of the session recorded (a zksession.Bound), so it is never
// applied once that session is gone, and so never to a node another
// session created after ours expired. While the session lives, its
// ephemeral node stays until someone deletes it, and the only deletes of
// owner nodes are their owners' own releases: every member deletes only
// nodes of its own session (read back, or recorded here), and a delete
// retried after a lost connection re-checks the node's session first
// (zksession.Session.DeleteEphemeral). So a node recorded here is still ours
// when the release runs. A read-then-delete relies on the same property
// between its read and its delete. What breaks the property (an operator
// deleting owner nodes of a live group by hand; Kafka's Scala consumer,
// which deletes the nodes it claimed unconditionally, retrying after a
// lost connection) defeats the read as well: the node may be recreated by
// a peer between the read and the delete.
//
// An entry is removed as soon as a delete of its node is attempted,
// whatever the outcome: a node whose delete failed is read first the next
// time. Entries of another session than the one a release runs in are
// ignored (that session's nodes went with it).
type ownedNodes map[zkutil.TopicPartition]ownedNode

// ownedNode is an owner node a member holds.
type ownedNode struct {
	thread  zkutil.ConsumerThreadID
	session int64
	version int32
}

// version returns the version of the node of tp when it is known to hold
// thread th in session.
func (o ownedNodes) version(tp zkutil.TopicPartition, th zkutil.ConsumerThreadID, session int64) (int32, bool) {
	n, ok := o[tp]
	if !ok || n.thread != th || n.session != session {
		return 0, false
	}
	return n.version, true
}

// forget removes the partitions of owned.
func (o ownedNodes) forget(owned map[zkutil.TopicPartition]zkutil.ConsumerThreadID) {
	for tp := range owned {
		delete(o, tp)
	}
}
