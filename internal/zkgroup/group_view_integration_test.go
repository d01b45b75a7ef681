package zkgroup

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// TestAbsurdRegistrationIsIgnored: another member registered with 2^31-1
// streams (valid for Scala, 48 GiB of thread ids for every member that
// expands it) is reported as a broken registration and left out; the rest
// of the group splits the partitions without allocating anything large.
func TestAbsurdRegistrationIsIgnored(t *testing.T) {
	c := testcluster.Shared(t)
	observer := dialObserver(t, c)
	topic := newTopic(t, c, 4)
	topics := map[string]int{topic: 1}
	group := testcluster.UniqueName("g-absurd")
	ctx := context.Background()
	absurd := zkutil.ConsumerIDPath(group, group+"_absurd")
	require.NoError(t, observer.CreateEphemeral(ctx, absurd,
		[]byte(`{"version":1,"subscription":{"`+topic+`":2147483647},"pattern":"static","timestamp":"1"}`)))

	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	m1 := startMember(t, c, group, group+"_m1", memberOpts{topics: topics})
	m2 := startMember(t, c, group, group+"_m2", memberOpts{topics: topics})
	var decodeErr *zkutil.DecodeError
	select {
	case err := <-m1.errs:
		require.True(t, errors.As(err, &decodeErr), "got %v", err)
		require.Equal(t, absurd, decodeErr.Path)
		require.ErrorContains(t, err, "2147483647, more than the limit of 65536")
	case <-time.After(30 * time.Second):
		t.Fatal("the absurd registration was not reported")
	}
	require.True(t, testwait.Until(60*time.Second, func() bool {
		return len(m1.rec.snapshot()) == 2 && len(m2.rec.snapshot()) == 2
	}), "members split the partitions around the absurd one: %v %v", m1.rec.snapshot(), m2.rec.snapshot())
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(256<<20), "allocated while rebalancing")
}
