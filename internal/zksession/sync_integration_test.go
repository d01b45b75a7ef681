package zksession

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// TestSyncThenReadSeesAnotherSessionsWrite: a session connected to one
// server of the ensemble reads, after Sync, what a session connected to
// another server wrote and had acknowledged, every time.
func TestSyncThenReadSeesAnotherSessionsWrite(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	servers := c.ZKServers()
	if len(servers) < 2 {
		t.Fatalf("the shared cluster has %d ZooKeeper server(s); this test needs an ensemble", len(servers))
	}
	ctx := testwait.Context(t, 2*time.Minute)
	writer := dialSession(t, ctx, SessionConfig{Connect: servers[0] + c.Chroot()})
	reader := dialSession(t, ctx, SessionConfig{Connect: servers[1] + c.Chroot()})
	path := "/zkconsumer-sync-test-" + testcluster.UniqueName("n")
	require.NoError(t, writer.SetOrCreate(ctx, path, []byte("0")))
	t.Cleanup(func() { _ = writer.Delete(ctx, path, -1) })
	for i := 1; i <= 200; i++ {
		want := strconv.Itoa(i)
		require.NoError(t, writer.SetOrCreate(ctx, path, []byte(want)))
		require.NoError(t, reader.Sync(ctx, path))
		got, _, err := reader.Get(ctx, path)
		require.NoError(t, err)
		require.Equal(t, want, string(got), "read %d", i)
	}
	require.NoError(t, reader.Sync(ctx, "/no/such/node"), "sync needs no node")
	require.NoError(t, reader.Close())
	require.Error(t, reader.Sync(ctx, path), "sync on a closed session")
}
