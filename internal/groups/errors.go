package groups

import (
	"errors"
	"strings"
)

// Errors of the group operations. They are wrapped with the group, topic or
// partition they concern; compare with errors.Is.
var (
	// ErrUnknownGroup: /consumers/<group> does not exist.
	ErrUnknownGroup = errors.New("unknown group")
	// ErrUnknownTopic: /brokers/topics/<topic> does not exist.
	ErrUnknownTopic = errors.New("unknown topic")
	// ErrUnknownPartition: the topic exists but has no such partition.
	ErrUnknownPartition = errors.New("unknown partition")
	// ErrGroupActive: the group has members registered under
	// /consumers/<group>/ids, so its offsets and owners belong to them.
	ErrGroupActive = errors.New("the group has registered members")
	// ErrSubscribed: --delete-offsets refused a topic that a registered
	// member of the group subscribes to, as Kafka's coordinator refuses it
	// with GROUP_SUBSCRIBED_TO_TOPIC: its offsets are that member's.
	ErrSubscribed = errors.New("a member of the group subscribes to the topic")
	// ErrNoLeader: a partition has no leader, or its leader is not a
	// registered broker, so its log offsets cannot be asked for.
	ErrNoLeader = errors.New("partition has no available leader")
	// ErrNoChroot: the chroot of the ZooKeeper connect string does not
	// exist, which usually means a mistyped or forgotten chroot.
	ErrNoChroot = errors.New("chroot does not exist")
)

// BadNodesError reports znodes whose names or data are not what Kafka
// writes (a non-numeric offset, a partition named "x"). The readers that
// return it still return everything they could read.
type BadNodesError struct {
	// Errs has one error per bad node; most are *zkutil.DecodeError.
	Errs []error
}

// Error lists the bad nodes, one per line after the first.
func (e *BadNodesError) Error() string {
	msgs := make([]string, len(e.Errs))
	for i, err := range e.Errs {
		msgs[i] = err.Error()
	}
	return "unreadable znodes: " + strings.Join(msgs, "; ")
}

// Unwrap returns the errors of the bad nodes.
func (e *BadNodesError) Unwrap() []error { return e.Errs }

// badNodes returns nil for no errors, else a *BadNodesError.
func badNodes(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return &BadNodesError{Errs: errs}
}
