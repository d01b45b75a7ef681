package chaos

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"
)

// Regression is a committed offset that went backwards: a commit that the
// offset store applied after another one of the same partition, with a
// smaller offset (or a deletion). The group then delivers the messages in
// between again, and the consumer's promise of never committing less than
// what was consumed is broken.
type Regression struct {
	Partition string
	From, To  int64 // To is -1 for a deletion
	At        int64 // when the store applied To
	// By names the writer of To (ZooKeeper: the consumer id and session),
	// when known.
	By string
}

// NonOwnerWrite is a commit to ZooKeeper by a session that did not hold the
// partition's owner node when ZooKeeper applied it: a write that outlived
// its ownership (it was queued under an earlier session, say).
type NonOwnerWrite struct {
	Partition string
	Offset    int64
	At        int64
	By        string
	Why       string
}

// loadOffsets reads the committed-offset observation and finds the
// regressions and the writes by non-owners. A missing observation is a
// problem of the run: without it no duplicate can be explained.
func (v *verifier) loadOffsets() error {
	commits, obs, err := loadCommits(v.dir)
	if errors.Is(err, os.ErrNotExist) {
		v.res.Observation = CommitObservation{Problems: []string{"the committed offsets were not observed (" + err.Error() + ")"}}
		return nil
	}
	if err != nil {
		return err
	}
	v.res.Observation = obs
	for _, c := range commits {
		tp := c.tp()
		v.commits[tp] = append(v.commits[tp], c)
	}
	for _, tp := range slices.SortedFunc(func(yield func(topicPartition) bool) {
		for tp := range v.commits {
			if !yield(tp) {
				return
			}
		}
	}, compareTP) {
		cs := v.commits[tp]
		slices.SortStableFunc(cs, func(a, b CommitRecord) int { return cmpInt64(a.Order, b.Order) })
		for i, c := range cs {
			if c.NotOwner != "" {
				v.res.NonOwnerWrites = append(v.res.NonOwnerWrites, NonOwnerWrite{
					Partition: tp.String(), Offset: c.Offset, At: c.Time, By: c.writer(), Why: c.NotOwner})
			}
			if i == 0 {
				continue
			}
			prev := cs[i-1]
			if c.Deleted || (!prev.Deleted && c.Offset < prev.Offset) {
				r := Regression{Partition: tp.String(), From: prev.Offset, To: c.Offset, At: c.Time, By: c.writer()}
				v.res.Regressions = append(v.res.Regressions, r)
			}
		}
	}
	return nil
}

// writer names who wrote c, as far as the store tells.
func (c CommitRecord) writer() string {
	switch {
	case c.Consumer != "":
		return fmt.Sprintf("%s (session %s)", c.Consumer, sessionHex(c.Session))
	case c.Session != 0:
		return "session " + sessionHex(c.Session)
	}
	return ""
}

// lastCommit returns the offset of tp committed last before to, as
// observed; ok is false when no commit of tp was applied before to. The
// stores' clocks have millisecond precision, so a commit stamped in the
// millisecond of to may have come after it and does not count.
func (v *verifier) lastCommit(tp topicPartition, to int64) (offset int64, ok bool) {
	var best *CommitRecord
	for i := range v.commits[tp] {
		r := &v.commits[tp][i]
		if r.Time+int64(time.Millisecond) <= to && (best == nil || r.Order > best.Order) {
			best = r
		}
	}
	if best == nil || best.Deleted {
		return 0, false
	}
	return best.Offset, true
}

// highestCommit returns the highest offset of tp committed before to; ok
// is false when nothing was.
func (v *verifier) highestCommit(tp topicPartition, to int64) (offset int64, ok bool) {
	for _, r := range v.commits[tp] {
		if r.Time+int64(time.Millisecond) <= to && !r.Deleted && (!ok || r.Offset > offset) {
			offset, ok = r.Offset, true
		}
	}
	return offset, ok
}

func (r Regression) String() string {
	s := r.Partition + ": " + strconv.FormatInt(r.From, 10) + " -> "
	if r.To < 0 {
		s += "deleted"
	} else {
		s += strconv.FormatInt(r.To, 10) + fmt.Sprintf(" (%d messages back)", r.From-r.To)
	}
	if r.By != "" {
		s += " by " + r.By
	}
	return s
}
