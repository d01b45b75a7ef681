package testcluster

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// TestSharedClusterIsRealKafka shows what the integration tests talk to: the
// broker's protocol versions and its registration in ZooKeeper.
func TestSharedClusterIsRealKafka(t *testing.T) {
	t.Parallel()
	c := Shared(t)
	ctx := testwait.Context(t, time.Minute)

	fetchVersion, err := c.BrokerVersion(ctx)
	require.NoError(t, err)
	// Fetch v17 is Kafka 3.9's newest; 3.x brokers all serve at least v12.
	require.GreaterOrEqual(t, fetchVersion, int16(12))
	t.Logf("broker %s serves Fetch up to v%d (Kafka 3.9 serves v17)", c.BrokerAddrs()[0], fetchVersion)

	ids, err := c.RegisteredBrokers(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, ids)
	t.Logf("brokers registered under %s/brokers/ids: %v", c.Chroot(), ids)

	conn, err := c.dialZK(ctx)
	require.NoError(t, err)
	defer conn.Close()
	data, _, err := conn.Get(fmt.Sprintf("%s/brokers/ids/%d", c.Chroot(), ids[0]))
	require.NoError(t, err)
	var reg struct {
		Version   int      `json:"version"`
		Endpoints []string `json:"endpoints"`
	}
	require.NoError(t, json.Unmarshal(data, &reg))
	require.Equal(t, 5, reg.Version, "Kafka 3.9 writes broker registration version 5: %s", data)
	require.NotEmpty(t, reg.Endpoints)
	require.True(t, strings.HasPrefix(reg.Endpoints[0], "PLAINTEXT://127.0.0.1:"), "first endpoint %q", reg.Endpoints[0])
	t.Logf("registration of broker %d: %s", ids[0], data)
}

func TestProduceAndReadBack(t *testing.T) {
	t.Parallel()
	c := Shared(t)
	ctx := testwait.Context(t, 2*time.Minute)
	topic := UniqueName("harness-produce")
	require.NoError(t, c.CreateTopic(ctx, topic, 3, 1))

	for _, codec := range []sarama.CompressionCodec{sarama.CompressionNone, sarama.CompressionGZIP, sarama.CompressionSnappy, sarama.CompressionLZ4, sarama.CompressionZSTD} {
		first := int(codec) * 1000
		got, err := c.Produce(ctx, topic, 60, ProduceOptions{Partition: -1, Compression: codec, ValueSize: 100, FirstSeq: first})
		require.NoError(t, err, "codec %v", codec)
		require.Equal(t, 60, got.Count())
		require.Len(t, got.Offsets, 3, "round-robin over all partitions")
		for p, seqs := range got.Seqs {
			for i := 1; i < len(seqs); i++ {
				require.Less(t, seqs[i-1], seqs[i], "partition %d keeps sequence order", p)
			}
		}
	}

	// Read partition 0 back with sarama to check values and sequence parsing.
	consumer, err := sarama.NewConsumer(c.BrokerAddrs(), SaramaConfig())
	require.NoError(t, err)
	defer consumer.Close()
	pc, err := consumer.ConsumePartition(topic, 0, sarama.OffsetOldest)
	require.NoError(t, err)
	defer pc.Close()
	for i := 0; i < 100; i++ {
		select {
		case m := <-pc.Messages():
			seq, err := ParseSeq(m.Value)
			require.NoError(t, err)
			require.Equal(t, "key-"+strconv.Itoa(seq), string(m.Key))
			require.Len(t, m.Value, 100)
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		}
	}
}

// TestSessionTapExpiresSession proves that Expire really ends the victim's
// session: a second connection sees its ephemeral node vanish, and the
// victim is told its session expired when it reconnects.
func TestSessionTapExpiresSession(t *testing.T) {
	t.Parallel()
	c := Shared(t)
	ctx := testwait.Context(t, time.Minute)

	tap := &SessionTap{}
	victim, events, err := zk.Connect(c.ZKServers(), 6*time.Second, zk.WithDialer(tap.Dial), zk.WithLogger(discardLogger{}))
	require.NoError(t, err)
	defer victim.Close()
	states := make(chan zk.State, 64)
	go func() {
		for ev := range events {
			if ev.Type == zk.EventSession {
				select {
				case states <- ev.State:
				default:
				}
			}
		}
	}()
	waitState(t, ctx, states, zk.StateHasSession)
	path := "/" + UniqueName("tap-victim")
	_, err = victim.Create(path, []byte("x"), zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	oldSession := victim.SessionID()
	require.Equal(t, oldSession, tap.SessionID())

	observer, err := c.dialZK(ctx)
	require.NoError(t, err)
	defer observer.Close()
	exists, _, gone, err := observer.ExistsW(path)
	require.NoError(t, err)
	require.True(t, exists)

	require.NoError(t, tap.Expire())
	select {
	case ev := <-gone:
		require.Equal(t, zk.EventNodeDeleted, ev.Type, "observer sees the ephemeral node deleted")
	case <-ctx.Done():
		t.Fatal("ephemeral node of the expired session is still there")
	}
	waitState(t, ctx, states, zk.StateExpired)
	waitState(t, ctx, states, zk.StateHasSession)
	require.NotEqual(t, oldSession, victim.SessionID(), "the victim works on a new session")
	exists, _, err = victim.Exists(path)
	require.NoError(t, err)
	require.False(t, exists)
}

func waitState(t *testing.T, ctx context.Context, states <-chan zk.State, want zk.State) {
	t.Helper()
	for {
		select {
		case s := <-states:
			if s == want {
				return
			}
		case <-ctx.Done():
			t.Fatalf("no %v session event", want)
		}
	}
}

// TestProxyBlackholeAndReset is not parallel: the requests it forwards
// must be answered within a 2 s read timeout.
func TestProxyBlackholeAndReset(t *testing.T) {
	c := Shared(t)
	p, err := NewProxy(c.BrokerAddrs()[0])
	require.NoError(t, err)
	defer p.Close()

	cfg := SaramaConfig()
	cfg.Net.ReadTimeout = 2 * time.Second
	b := sarama.NewBroker(p.Addr())
	require.NoError(t, b.Open(cfg))
	defer b.Close()
	_, err = b.ApiVersions(&sarama.ApiVersionsRequest{})
	require.NoError(t, err, "forwarding")

	p.SetMode(Blackhole)
	_, err = b.ApiVersions(&sarama.ApiVersionsRequest{})
	require.Error(t, err, "a blackholed request times out")
	p.SetMode(Forward)

	p.SetMode(Refuse)
	b2 := sarama.NewBroker(p.Addr())
	require.NoError(t, b2.Open(cfg))
	_, err = b2.ApiVersions(&sarama.ApiVersionsRequest{})
	require.Error(t, err, "a refused connection fails")
	b2.Close()
	p.SetMode(Forward)

	b3 := sarama.NewBroker(p.Addr())
	require.NoError(t, b3.Open(cfg))
	defer b3.Close()
	_, err = b3.ApiVersions(&sarama.ApiVersionsRequest{})
	require.NoError(t, err, "forwarding again")
	p.ResetAll()
	_, err = b3.ApiVersions(&sarama.ApiVersionsRequest{})
	require.Error(t, err, "a reset connection fails")
}
