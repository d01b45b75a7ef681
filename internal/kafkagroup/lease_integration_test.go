package kafkagroup

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// TestHealthyMemberAlwaysHoldsItsLease: heartbeat.interval.ms 5 s with
// session.timeout.ms 6 s is a configuration Kafka accepts, though a
// heartbeat's lease lasts only 4.5 s. A member whose heartbeats all
// succeed holds its lease at every moment of its generation all the same:
// it heartbeats often enough to renew the lease before it lapses.
func TestHealthyMemberAlwaysHoldsItsLease(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	topic := createTopic(t, c, "kg-lease", 2)
	cfg := testConfig(c, testcluster.UniqueName("kg-lease"), topic)
	cfg.SessionTimeout = 6 * time.Second
	cfg.HeartbeatInterval = 5 * time.Second
	require.NoError(t, cfg.Validate(), "Kafka accepts any heartbeat interval below the session timeout")
	r := startRunner(t, cfg)
	testwait.WaitFor(t, 30*time.Second, func() bool { return settled(map[string]int32{topic: 2}, r) }, "the member to own the topic")
	gen := r.live()

	// Were it to heartbeat only every 5 s, its lease would lapse for
	// 0.5 s out of every 5 s: any window longer than 5.5 s holds such a
	// lapse wherever it starts, which 1.5 intervals leave room for.
	window := cfg.HeartbeatInterval * 3 / 2
	held, samples := 0, 0
	for end := time.Now().Add(window); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		require.NoError(t, gen.Err(), "the generation ended")
		samples++
		if gen.LeaseHeld() {
			held++
		}
	}
	t.Logf("lease held in %d of %d samples over %v", held, samples, window)
	require.Equal(t, samples, held, "a healthy member's lease lapsed between its heartbeats")
}
