package offsetfetch

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/zkutil"
)

var (
	tp0 = zkutil.TopicPartition{Topic: "t", Partition: 0}
	tp1 = zkutil.TopicPartition{Topic: "t", Partition: 1}
	tp2 = zkutil.TopicPartition{Topic: "t", Partition: 2}
	tp3 = zkutil.TopicPartition{Topic: "t", Partition: 3}
)

// script is a coordinator's answers in turn, recording what each fetch
// asked for and when the coordinator was looked up again.
type script struct {
	answers []map[zkutil.TopicPartition]int64
	errs    []error
	log     []string
	asked   [][]zkutil.TopicPartition
}

func (s *script) fetch(tps []zkutil.TopicPartition) (map[zkutil.TopicPartition]int64, error) {
	i := len(s.asked)
	s.asked = append(s.asked, tps)
	s.log = append(s.log, "fetch")
	if i < len(s.errs) && s.errs[i] != nil {
		return nil, s.errs[i]
	}
	out := map[zkutil.TopicPartition]int64{}
	for _, tp := range tps {
		if off, ok := s.answers[i][tp]; ok {
			out[tp] = off
		}
	}
	return out, nil
}

func (s *script) relookup() { s.log = append(s.log, "relookup") }

// TestConfirmedAsksNoneAgain: partitions answered "none" are asked again,
// alone, after the coordinator is looked up again; the second answer
// counts for them, the first for the others.
func TestConfirmedAsksNoneAgain(t *testing.T) {
	s := &script{answers: []map[zkutil.TopicPartition]int64{
		{tp0: zkutil.NoOffset, tp1: 7, tp2: zkutil.NoOffset, tp3: zkutil.NoOffset},
		{tp0: 42, tp1: zkutil.NoOffset, tp2: zkutil.NoOffset}, // tp3: left out (an error of its own)
	}}
	start := time.Now()
	got, err := Confirmed(context.Background(), []zkutil.TopicPartition{tp0, tp1, tp2, tp3}, 50*time.Millisecond, s.fetch, s.relookup)
	require.NoError(t, err)
	require.GreaterOrEqual(t, time.Since(start), 50*time.Millisecond, "waits retry.backoff before asking again")
	require.Equal(t, map[zkutil.TopicPartition]int64{tp0: 42, tp1: 7, tp2: zkutil.NoOffset}, got)
	require.Equal(t, []string{"fetch", "relookup", "fetch"}, s.log)
	require.Equal(t, [][]zkutil.TopicPartition{{tp0, tp1, tp2, tp3}, {tp0, tp2, tp3}}, s.asked)
}

// TestConfirmedOnlyWhenNone: an answer with an offset for every partition
// (or for none asked) is taken as it is, with one fetch.
func TestConfirmedOnlyWhenNone(t *testing.T) {
	for name, tps := range map[string][]zkutil.TopicPartition{"offsets": {tp0, tp1}, "empty": nil} {
		t.Run(name, func(t *testing.T) {
			s := &script{answers: []map[zkutil.TopicPartition]int64{{tp0: 3, tp1: 0}}}
			got, err := Confirmed(context.Background(), tps, time.Hour, s.fetch, s.relookup)
			require.NoError(t, err)
			want := map[zkutil.TopicPartition]int64{}
			for _, tp := range tps {
				want[tp] = s.answers[0][tp]
			}
			require.Equal(t, want, got)
			require.Equal(t, []string{"fetch"}, s.log)
		})
	}
}

// TestConfirmedWaitIsCapped: a long retry backoff waits MaxConfirmDelay
// at most.
func TestConfirmedWaitIsCapped(t *testing.T) {
	s := &script{answers: []map[zkutil.TopicPartition]int64{{tp0: zkutil.NoOffset}, {tp0: 5}}}
	start := time.Now()
	got, err := Confirmed(context.Background(), []zkutil.TopicPartition{tp0}, time.Hour, s.fetch, s.relookup)
	require.NoError(t, err)
	require.Equal(t, map[zkutil.TopicPartition]int64{tp0: 5}, got)
	elapsed := time.Since(start)
	require.GreaterOrEqual(t, elapsed, MaxConfirmDelay)
	require.Less(t, elapsed, 30*time.Second)
}

// TestConfirmedErrors: an error of either fetch, or the end of ctx during
// the wait, fails the whole fetch.
func TestConfirmedErrors(t *testing.T) {
	boom := errors.New("boom")
	noneFirst := []map[zkutil.TopicPartition]int64{{tp0: zkutil.NoOffset, tp1: 1}, {tp0: 2}}

	s := &script{errs: []error{boom}}
	got, err := Confirmed(context.Background(), []zkutil.TopicPartition{tp0}, 0, s.fetch, s.relookup)
	require.ErrorIs(t, err, boom)
	require.Nil(t, got)
	require.Equal(t, []string{"fetch"}, s.log)

	s = &script{answers: noneFirst, errs: []error{nil, boom}}
	got, err = Confirmed(context.Background(), []zkutil.TopicPartition{tp0, tp1}, 0, s.fetch, s.relookup)
	require.ErrorIs(t, err, boom)
	require.Nil(t, got)
	require.Equal(t, []string{"fetch", "relookup", "fetch"}, s.log)

	cause := errors.New("shutting down")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	s = &script{answers: noneFirst}
	got, err = Confirmed(ctx, []zkutil.TopicPartition{tp0, tp1}, time.Hour, s.fetch, s.relookup)
	require.ErrorIs(t, err, cause)
	require.Nil(t, got)
	require.Equal(t, []string{"fetch"}, s.log, "no second fetch after ctx ended")
}
