package streamcore

// Fence decides whether the messages of a partition may be handed out at
// this moment. The connector gives every partition of a generation the
// lease of the ZooKeeper session that claimed it: when the lease lapses
// (the session may be expiring, and another member may soon own the
// partition), iterators stop handing out its messages, keeping their
// place, until the lease holds again or the partition is revoked.
type Fence interface {
	// Held reports whether delivery is allowed now. It is called before
	// every message, so it must be cheap and must not block.
	Held() bool
	// Changed returns a channel that is closed when Held may have
	// changed, either way: a renewal, a revocation, and also a lapse when
	// the lease runs out by the clock, so that a caller waiting while Held
	// is true (a commit in flight, see coordinator.Client.CommitFenced) learns of
	// the lapse when it happens. Callers take it before checking Held,
	// and check Held again when it is closed.
	Changed() <-chan struct{}
}

// SetFence makes delivery of the partition's messages depend on f. It must
// be called before the partition is handed to a fetcher; nil means no
// fence.
func (p *PartitionTopicInfo) SetFence(f Fence) { p.fence = f }
