package kafkagroup

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
)

// TestLeaseFollowsTheBrokersSessionTimeout: in this protocol the broker
// sets the session timeout (Kafka 4.4 in KRaft mode). A member configured
// with session.timeout.ms 60 s in a group whose broker enforces 45 s (the
// default of group.consumer.session.timeout.ms) must not lease its
// partitions for three quarters of 60 s: the coordinator may hand them on
// after 45 s without a heartbeat. Join reads the group's session timeout,
// the lease follows it, and the difference is logged; a session timeout
// set on the group itself (consumer.session.timeout.ms, 50 s) is read at
// the next Join.
func TestLeaseFollowsTheBrokersSessionTimeout(t *testing.T) {
	t.Parallel()
	c := testcluster.SharedKRaft(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topic := testcluster.UniqueName("cg-session")
	require.NoError(t, c.CreateTopic(ctx, topic, 2, 1))
	group := testcluster.UniqueName("cg-session")

	var logs syncBuffer
	cfg := Config{Protocol: ProtocolConsumer, Brokers: c.BrokerAddrs(), Group: group, Topics: []string{topic}, SessionTimeout: 60 * time.Second,
		RequestTimeout: 10 * time.Second, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	m, err := New(cfg)
	require.NoError(t, err)
	defer m.Close()
	gen, err := m.Join(ctx)
	require.NoError(t, err)
	require.Equal(t, 45*time.Second, consumerLeaseTerm(m), "the lease term is the broker's session timeout")
	require.Equal(t, 45*time.Second, time.Duration(float64(gen.lease.Length())/leaseFraction).Round(time.Millisecond))
	require.Contains(t, logs.String(), "consumer.session.timeout.ms=45000")
	require.Contains(t, logs.String(), "session.timeout.ms=60000")

	admin, err := sarama.NewClusterAdmin(c.BrokerAddrs(), c.ClientConfig())
	require.NoError(t, err)
	defer admin.Close()
	v := "50000"
	require.NoError(t, admin.IncrementalAlterConfig(groupResource, group,
		map[string]sarama.IncrementalAlterConfigsEntry{groupSessionConfig: {Operation: sarama.IncrementalAlterConfigsOperationSet, Value: &v}}, false))
	// The change reaches the brokers through the metadata log: wait until
	// the cluster describes it, as the member's next Join will read it.
	require.Eventually(t, func() bool {
		d, err := m.consumer.describeSessionTimeout()
		return err == nil && d == 50*time.Second
	}, 30*time.Second, 50*time.Millisecond, "the cluster never described the group's new session timeout")
	gen2, err := m.Join(ctx)
	require.NoError(t, err)
	require.Equal(t, 50*time.Second, consumerLeaseTerm(m), "the group's own session timeout is read at the next Join")
	require.Equal(t, 50*time.Second, time.Duration(float64(gen2.lease.Length())/leaseFraction).Round(time.Millisecond))
}

// syncBuffer is a bytes.Buffer for a logger written from goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func consumerLeaseTerm(m *Member) time.Duration {
	m.consumer.mu.Lock()
	defer m.consumer.mu.Unlock()
	return m.consumer.leaseTermLocked()
}
