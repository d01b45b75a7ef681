package kafkagroup

import (
	"errors"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/kip848"
)

func consumerConfig() Config {
	return Config{Protocol: ProtocolConsumer, Brokers: []string{"b:9092"}, Group: "g", Topics: []string{"t"}}
}

func TestConsumerConfigValidate(t *testing.T) {
	require.NoError(t, consumerConfig().Validate())
	for name, mutate := range map[string]func(*Config){
		"no brokers":      func(c *Config) { c.Brokers = nil },
		"no group":        func(c *Config) { c.Group = "" },
		"no topics":       func(c *Config) { c.Topics = nil },
		"empty topic":     func(c *Config) { c.Topics = []string{""} },
		"names and regex": func(c *Config) { c.TopicRegex = "t.*" },
		"assignor":        func(c *Config) { c.RemoteAssignor = "sticky" },
		"session":         func(c *Config) { c.SessionTimeout = -time.Second },
		"request":         func(c *Config) { c.RequestTimeout = time.Microsecond },
		"huge rebalance":  func(c *Config) { c.RebalanceTimeout = 1 << 62 },
	} {
		cfg := consumerConfig()
		mutate(&cfg)
		require.Error(t, cfg.Validate(), name)
		_, err := New(cfg)
		require.Error(t, err, name)
	}
	byRegex := consumerConfig()
	byRegex.Topics, byRegex.TopicRegex = nil, "t.*"
	require.NoError(t, byRegex.Validate())
	for _, a := range []string{"", RemoteAssignorUniform, RemoteAssignorRange} {
		cfg := consumerConfig()
		cfg.RemoteAssignor = a
		require.NoError(t, cfg.Validate())
	}
}

// TestNewAcceptsSASL: SASL is supported in this mode (before, New refused
// it); the connections' SASL is tested against Kafka in connector's
// TestKIP848SASLWithJavaMember.
func TestNewAcceptsSASL(t *testing.T) {
	cfg := consumerConfig()
	cfg.Secure = func(c *sarama.Config) { c.Net.SASL.Enable = true }
	m, err := New(cfg)
	require.NoError(t, err)
	require.NoError(t, m.Close())
}

// TestClassify sorts ConsumerGroupHeartbeat's error codes as Java's
// consumer does.
func TestClassify(t *testing.T) {
	for code, want := range map[int16]errorClass{
		int16(sarama.ErrNotCoordinatorForConsumer):       classMoved,
		int16(sarama.ErrConsumerCoordinatorNotAvailable): classMoved,
		int16(sarama.ErrOffsetsLoadInProgress):           classRetry,
		int16(sarama.ErrUnknownMemberId):                 classFenced,
		codeFencedMemberEpoch:                            classFenced,
		codeUnreleasedInstanceID:                         classRetry,
		codeUnsupportedAssignor:                          classFatal,
		int16(sarama.ErrGroupAuthorizationFailed):        classFatal,
		int16(sarama.ErrInvalidRequest):                  classFatal,
		int16(sarama.ErrUnsupportedVersion):              classFatal,
	} {
		assert.Equal(t, want, classify(code), "code %d", code)
	}
}

func TestKafkaError(t *testing.T) {
	assert.Nil(t, kafkaError(0, nil))
	msg := "epoch 3 is not 4"
	err := kafkaError(codeFencedMemberEpoch, &msg)
	assert.ErrorContains(t, err, "FENCED_MEMBER_EPOCH")
	assert.ErrorContains(t, err, msg)
	err = kafkaError(int16(sarama.ErrUnknownMemberId), nil)
	assert.True(t, errors.Is(err, sarama.ErrUnknownMemberId))
	m := &consumer{m: &Member{cfg: consumerConfig().withDefaults()}}
	assert.ErrorIs(t, m.fatal(kafkaError(35, nil)), ErrUnsupported)
	assert.ErrorIs(t, m.fatal(kafkaError(35, nil)), ErrFatal)
}

var idA, idB = kip848.UUID{1}, kip848.UUID{2}

func consumerMember(t *testing.T) *Member {
	m, err := New(consumerConfig())
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	m.consumer.names[idA], m.consumer.ids["a"] = "a", idA
	m.consumer.names[idB], m.consumer.ids["b"] = "b", idB
	return m
}

// TestTargetAndRevocation: the coordinator's assignment, by topic id, is
// named; partitions of unknown ids are left out (taken once the metadata
// names them); a target that leaves owned partitions out is a pending
// revocation until acknowledged, and only then is the member settled.
func TestTargetAndRevocation(t *testing.T) {
	m := consumerMember(t)
	m.consumer.owned = map[string][]int32{"a": {0, 1}, "b": {2}}
	assert.False(t, m.consumer.revoking())
	assert.True(t, m.consumer.settled(), "no target yet: nothing to do")
	assert.Equal(t, m.consumer.owned, m.Target())

	m.consumer.target = []kip848.TopicPartitions{{TopicID: idA, Partitions: []int32{1, 0}}, {TopicID: idB, Partitions: []int32{}}, {TopicID: kip848.UUID{9}, Partitions: []int32{5}}}
	assert.Equal(t, map[string][]int32{"a": {0, 1}}, m.Target())
	assert.True(t, m.consumer.revoking(), "b-2 is revoked")
	assert.False(t, m.consumer.settled())
	resolved, missing := m.consumer.resolveLocked(m.consumer.target)
	assert.True(t, missing, "an unknown topic id")
	assert.Equal(t, map[string][]int32{"a": {0, 1}}, resolved)

	gen := newGeneration(3, "m", "", false, m.consumer.owned, time.Minute, time.Now(), time.Time{}, nil)
	m.gen = gen
	m.Acknowledge(gen, map[string][]int32{"a": {0, 1}, "b": {}})
	assert.Equal(t, map[string][]int32{"a": {0, 1}}, m.consumer.owned, "empty topics are dropped")
	assert.False(t, m.consumer.revoking())
	assert.True(t, m.consumer.settled())
	assert.Equal(t, []kip848.TopicPartitions{{TopicID: idA, Partitions: []int32{0, 1}}}, m.consumer.ownedLocked())

	// An ended generation acknowledges nothing.
	gen.end(ErrMembershipLost)
	m.Acknowledge(gen, map[string][]int32{})
	assert.Equal(t, map[string][]int32{"a": {0, 1}}, m.consumer.owned)

	// Fencing drops everything: the next heartbeat joins with epoch 0.
	m.consumer.epoch = 7
	m.consumer.fenced(nil)
	assert.Zero(t, m.consumer.epoch)
	assert.Empty(t, m.consumer.owned)
	assert.Nil(t, m.consumer.target)
}

// TestGenerationLease: the lease holds from a renewal for leaseFraction
// of the term, is not extended by older renewals, ends for good on
// membership loss, and survives ErrRebalanceStarted.
func TestGenerationLease(t *testing.T) {
	g := newGeneration(1, "m", "", false, nil, 400*time.Millisecond, time.Now(), time.Time{}, nil)
	assert.True(t, g.LeaseHeld())
	ch := g.LeaseChanged()
	g.lease.Renew(time.Now().Add(-time.Hour))
	select {
	case <-ch:
		t.Fatal("an older renewal changed the lease")
	default:
	}
	require.Eventually(t, func() bool { return !g.LeaseHeld() }, 2*time.Second, 5*time.Millisecond, "the lease lapses on its own")
	g.lease.Renew(time.Now())
	assert.True(t, g.LeaseHeld())
	g.end(ErrRebalanceStarted)
	assert.True(t, g.LeaseHeld(), "a generation given up by Join still owns its partitions until acknowledged")
	g.end(ErrMembershipLost)
	assert.False(t, g.LeaseHeld())
	g.lease.Renew(time.Now())
	assert.False(t, g.LeaseHeld(), "gone for good")
	assert.ErrorIs(t, g.Err(), ErrRebalanceStarted, "the first cause stays")
	require.Error(t, g.Context().Err())
}

// TestUpdatesSignalOnce: any number of changes pend as one signal.
func TestUpdatesSignalOnce(t *testing.T) {
	g := newGeneration(1, "m", "", false, nil, time.Minute, time.Now(), time.Time{}, nil)
	g.signalUpdate()
	g.signalUpdate()
	<-g.Updates()
	select {
	case <-g.Updates():
		t.Fatal("two signals")
	default:
	}
}
