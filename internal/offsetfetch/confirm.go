package offsetfetch

import (
	"context"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/backoff"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// MaxConfirmDelay is the longest wait before the OffsetFetch that confirms
// an answer of "no committed offset" (see Confirmed).
const MaxConfirmDelay = 200 * time.Millisecond

// Fetch is one OffsetFetch of tps, with the caller's own retries after
// coordinator errors: the committed offset of each partition it read,
// zkutil.NoOffset where the group has none. A partition it leaves out of
// its answer without failing (one Kafka reported an error for) is the
// caller's to account for.
type Fetch func(tps []zkutil.TopicPartition) (map[zkutil.TopicPartition]int64, error)

// Confirmed returns fetch's answer for tps with every "no committed
// offset" in it confirmed. When the first answer has partitions at
// zkutil.NoOffset, Confirmed waits min(retryBackoff, MaxConfirmDelay),
// calls relookup, which makes the caller look the group's coordinator up
// again, and asks fetch again for those partitions only. Their second
// answer replaces the first (a partition the second answer leaves out is
// left out of the result); the other partitions keep the first answer, so
// a coordinator that resigns during the second fetch cannot take an offset
// away. An error of either fetch is returned as it is, and the cause of
// ctx if it ends during the wait; the result is then nil.
func Confirmed(ctx context.Context, tps []zkutil.TopicPartition, retryBackoff time.Duration, fetch Fetch, relookup func()) (map[zkutil.TopicPartition]int64, error) {
	offsets, err := fetch(tps)
	if err != nil {
		return nil, err
	}
	var none []zkutil.TopicPartition
	for _, tp := range tps {
		if off, ok := offsets[tp]; ok && off == zkutil.NoOffset {
			none = append(none, tp)
		}
	}
	if len(none) == 0 {
		return offsets, nil
	}
	if !backoff.Sleep(ctx, min(retryBackoff, MaxConfirmDelay)) {
		return nil, context.Cause(ctx)
	}
	relookup()
	again, err := fetch(none)
	if err != nil {
		return nil, err
	}
	for _, tp := range none {
		if off, ok := again[tp]; ok {
			offsets[tp] = off
		} else {
			delete(offsets, tp)
		}
	}
	return offsets, nil
}
