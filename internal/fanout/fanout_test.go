package fanout

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestEachCallsEveryIndexOnceWithinTheLimit(t *testing.T) {
	for _, tc := range []struct{ n, limit int }{{0, 4}, {1, 4}, {5, 1}, {100, 7}, {10, 0}} {
		var mu sync.Mutex
		seen := map[int]int{}
		var running, peak atomic.Int32
		Each(tc.n, tc.limit, nil, func(i int) {
			now := running.Add(1)
			for {
				p := peak.Load()
				if now <= p || peak.CompareAndSwap(p, now) {
					break
				}
			}
			time.Sleep(time.Millisecond)
			running.Add(-1)
			mu.Lock()
			seen[i]++
			mu.Unlock()
		})
		require.Len(t, seen, tc.n, "n=%d", tc.n)
		for i, c := range seen {
			require.Equal(t, 1, c, "index %d called %d times", i, c)
		}
		require.LessOrEqual(t, int(peak.Load()), max(tc.limit, 1), "n=%d limit=%d", tc.n, tc.limit)
	}
}

func TestEachStopsStartingOnceStopSaysSo(t *testing.T) {
	var calls atomic.Int32
	var stopped atomic.Bool
	Each(50, 2, stopped.Load, func(i int) {
		if calls.Add(1) == 5 {
			stopped.Store(true)
		}
	})
	// Once stop returns true no call starts; those already started (at
	// most the limit) finish.
	require.GreaterOrEqual(t, int(calls.Load()), 5)
	require.LessOrEqual(t, int(calls.Load()), 5+2)

	called := false
	Each(1, 2, func() bool { return true }, func(int) { called = true })
	require.False(t, called, "a single call is also asked")
}
