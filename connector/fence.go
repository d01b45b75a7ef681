package connector

import (
	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
)

// sessionFence lets the messages of a generation's partitions be handed out
// only while the lease of the ZooKeeper session that claimed them holds
// (zksession.Session.LeaseHeld): a member frozen or cut off past the lease
// delivers nothing more of them until the server has answered that same
// session again, and nothing at all once the session has expired. Its
// Changed closes at every change of the lease, its lapse by the clock
// included, so that a Kafka commit still unanswered when the lease lapses
// is cut off then (commitZK, coordinator.WithFence).
type sessionFence struct {
	session *zksession.Session
	id      int64
}

var _ streamcore.Fence = sessionFence{}

func (f sessionFence) Held() bool               { return f.session.LeaseHeld(f.id) }
func (f sessionFence) Changed() <-chan struct{} { return f.session.LeaseChanged() }
