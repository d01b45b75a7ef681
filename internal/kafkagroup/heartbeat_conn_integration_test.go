package kafkagroup

import (
	"context"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// TestHeartbeatsDoNotWaitBehindACommit: a follower of the group's
// partition of __consumer_offsets stops (SIGSTOP, three real brokers), so
// the coordinator holds every offset commit until offsets.commit.timeout.ms
// (5 s) waiting for that replica. A broker answers one connection's
// requests in order: heartbeats sent on the commit's connection would wait
// behind it, and a 4.5 s lease (session.timeout.ms 6 s) would lapse while
// the member is healthy. The member's lease holds throughout.
func TestHeartbeatsDoNotWaitBehindACommit(t *testing.T) {
	t.Parallel()
	c := testcluster.Private(t, testcluster.Options{Brokers: 3})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	topic := testcluster.UniqueName("kg-hbconn")
	require.NoError(t, c.CreateTopic(ctx, topic, 1, 3))
	group := testcluster.UniqueName("kg-hbconn")

	// The replicas of the group's partition of __consumer_offsets.
	client, err := sarama.NewClient(c.BrokerAddrs(), c.ClientConfig())
	require.NoError(t, err)
	defer client.Close()
	coord, err := client.Coordinator(group)
	require.NoError(t, err)
	parts, err := client.Partitions("__consumer_offsets")
	require.NoError(t, err)
	p := groupPartition(group, int32(len(parts)))
	replicas, err := client.Replicas("__consumer_offsets", p)
	require.NoError(t, err)
	follower := int32(-1)
	for _, r := range replicas {
		if r != coord.ID() {
			follower = r
		}
	}
	require.NotEqual(t, int32(-1), follower, "replicas %v of __consumer_offsets-%d, coordinator %d", replicas, p, coord.ID())

	cfg := testConfig(c, group, topic)
	cfg.SessionTimeout, cfg.RebalanceTimeout = 6*time.Second, 6*time.Second // a lease of 4.5 s
	r := startRunner(t, cfg)
	testwait.WaitFor(t, 60*time.Second, func() bool { return settled(map[string]int32{topic: 1}, r) }, "the member to own the topic")
	gen := r.live()

	require.NoError(t, c.PauseBroker(int(follower)))
	defer func() { require.NoError(t, c.ResumeBroker(int(follower))) }()
	committed := make(chan error, 1)
	start := time.Now()
	go func() {
		committed <- r.m.Commit(ctx, gen, map[zkutil.TopicPartition]int64{{Topic: topic, Partition: 0}: 7})
	}()
	held, samples := 0, 0
	var err2 error
	for wait := true; wait; {
		select {
		case err2 = <-committed:
			wait = false
		case <-time.After(10 * time.Millisecond):
			samples++
			if gen.LeaseHeld() {
				held++
			}
		}
	}
	took := time.Since(start)
	t.Logf("commit with a stopped follower: %v after %v; lease held in %d of %d samples", err2, took.Round(time.Millisecond), held, samples)
	require.Greater(t, took, 4*time.Second, "the commit did not wait for the stopped follower: the test shows nothing")
	require.NoError(t, gen.Err(), "the member lost its generation while a commit was slow")
	require.Equal(t, samples, held, "the lease lapsed while a commit was slow: heartbeats waited behind it")
}

// groupPartition is the partition of __consumer_offsets that holds group,
// as Kafka computes it: the absolute value of the group id's Java hash
// code (0 for the smallest int), modulo the partition count.
func groupPartition(group string, partitions int32) int32 {
	var h int32
	for _, r := range group { // ASCII ids: one UTF-16 unit each
		h = 31*h + r
	}
	if h < 0 {
		if h == -1<<31 {
			h = 0
		} else {
			h = -h
		}
	}
	return h % partitions
}
