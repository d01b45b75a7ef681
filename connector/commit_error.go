package connector

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// CommitError is the error of an offset commit that failed: Offsets are
// the offsets it tried to write (the next offset to consume, per
// partition), Err the cause. Every failed commit carries one, whether the
// application called CommitOffsets, CommitOffsetsMap or CommitMessages, or
// the connector committed on its own (an automatic commit, reported on
// Errors wrapping ErrAutoCommit; the commit of revoked partitions at a
// rebalance or at Shutdown). Find it with errors.As; errors.Is still
// matches the cause.
//
// A failed commit may have been applied all the same (unless the cause is
// ErrCommitFenced or ErrNotOwner: those were refused, or never sent). The
// error says the member did not learn that it succeeded, not that the
// offsets were not written: Kafka's coordinator can append a commit to __consumer_offsets
// and answer with an error (a timeout while a replica it waits for has
// died, say), and the record can become durable later; a write to
// ZooKeeper can be applied while its answer is lost. Until a later commit
// succeeds, the committed offset of a partition is either its offset
// before or Offsets' (the group's next owner may read either), so its
// messages since the last successful commit can be delivered again:
// at-least-once. (Kafka's Java consumer behaves the same way.)
type CommitError struct {
	Offsets map[TopicPartition]int64
	Err     error
}

// Error names the partitions and offsets (the first few) and the cause.
func (e *CommitError) Error() string {
	const show = 4
	tps := slices.SortedFunc(maps.Keys(e.Offsets), compareTP)
	var b strings.Builder
	fmt.Fprintf(&b, "connector: commit of %d partition", len(tps))
	if len(tps) != 1 {
		b.WriteByte('s')
	}
	b.WriteString(" (")
	for i, tp := range tps {
		if i == show {
			fmt.Fprintf(&b, ", ... %d more", len(tps)-show)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s@%d", tp, e.Offsets[tp])
	}
	fmt.Fprintf(&b, ") failed: %v", e.Err)
	return b.String()
}

// Unwrap returns the cause.
func (e *CommitError) Unwrap() error { return e.Err }

// underOnce wraps err under what, a sentinel or a description that
// starts with "connector: ", so that its text names the package once:
// "connector: auto-commit: commit of 2 partitions ..." rather than
// "connector: auto-commit: connector: commit of ...". errors.Is and
// errors.As see both what and err.
func underOnce(what, err error) error {
	return &underError{what: what, err: err}
}

type underError struct{ what, err error }

func (e *underError) Error() string {
	return e.what.Error() + ": " + strings.TrimPrefix(e.err.Error(), "connector: ")
}

func (e *underError) Unwrap() []error { return []error{e.what, e.err} }
