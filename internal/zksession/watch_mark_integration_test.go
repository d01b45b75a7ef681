package zksession

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// TestWatchMarkChangesBeforeTheNextAnswer: a node read with a watch keeps
// its mark until a change is reported, and the change is reported before
// any answer that follows it: once a read shows another client's write,
// the mark taken before the watching read has changed already, with no
// wait. A new session changes every mark.
func TestWatchMarkChangesBeforeTheNextAnswer(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, time.Minute)
	s := dialSession(t, ctx, SessionConfig{Connect: c.ZKConnect()})
	writer := dialSession(t, ctx, SessionConfig{Connect: c.ZKConnect()})
	path := "/" + testcluster.UniqueName("zksession-mark")
	require.NoError(t, writer.CreatePersistent(ctx, path, []byte("0")))

	for i := 1; i <= 20; i++ {
		mark := s.WatchMark(path)
		_, _, _, err := s.GetW(ctx, path)
		require.NoError(t, err)
		require.Equal(t, mark, s.WatchMark(path), "round %d: the mark changed without an event", i)
		want := fmt.Sprint(i)
		_, err = writer.Set(ctx, path, []byte(want), -1)
		require.NoError(t, err)
		require.NoError(t, s.Sync(ctx, path))
		got, _, err := s.Get(ctx, path)
		require.NoError(t, err)
		require.Equal(t, want, string(got))
		require.NotEqual(t, mark, s.WatchMark(path), "round %d: a read shows the write, the mark does not", i)
	}
	require.Equal(t, WatchMark{}, (&Session{}).WatchMark(path), "no session, no mark")
}
