//go:build matrix

package fetch

import (
	"context"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// brokerMax is the newest version of each request the fetcher sends that a
// broker release serves (Kafka's protocol guide, per release).
type brokerMax struct{ fetch, listOffsets, metadata int16 }

var releaseMax = map[string]brokerMax{
	testcluster.BrokerVersion0102: {fetch: 3, listOffsets: 1, metadata: 2},
	testcluster.BrokerVersion111:  {fetch: 7, listOffsets: 2, metadata: 5},
	testcluster.BrokerVersion282:  {fetch: 12, listOffsets: 6, metadata: 11},
	testcluster.BrokerVersion39:   {fetch: 17, listOffsets: 9, metadata: 12},
}

// TestNegotiatedVersions (make test-matrix) sends the fetcher's Fetch
// (its own encoding, at the version negotiateFetch picks), ListOffsets and
// Metadata requests (sarama's), built as the fetcher builds them with the
// default configuration, to a broker of every release, and checks the
// version each went out with: the newest both sides speak; and that the
// fetch decodes. It also checks
// that the broker is the release it claims (its newest Fetch).
func TestNegotiatedVersions(t *testing.T) {
	cfg := DefaultConfig().withDefaults()
	sc := cfg.saramaConfig()
	releases, err := testcluster.MatrixBrokerVersions()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range releases {
		t.Run(v, func(t *testing.T) {
			c := testcluster.Private(t, testcluster.Options{BrokerVersion: v})
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			maxFetch, err := c.BrokerVersion(ctx)
			if err != nil {
				t.Fatalf("ApiVersions: %v", err)
			}
			want := releaseMax[v]
			if maxFetch != want.fetch {
				t.Fatalf("Kafka %s serves Fetch up to v%d, want v%d", v, maxFetch, want.fetch)
			}
			topic := newTopic(t, c, "versions", 1, 1)
			produce(ctx, t, c, topic, 10, testcluster.ProduceOptions{Partition: 0})

			b, conn, err := openBrokerConn(ctx, c.BrokerAddrs()[0], sc, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()

			md := sarama.NewMetadataRequest(sc.Version, []string{topic})
			mdResp, err := b.GetMetadata(md)
			if err != nil {
				t.Fatalf("metadata: %v", err)
			}
			checkVersion(t, "Metadata", md.Version, sarama.NewMetadataRequest(sc.Version, nil).Version, want.metadata)
			if len(mdResp.Topics) != 1 || len(mdResp.Topics[0].Partitions) != 1 || mdResp.Topics[0].Partitions[0].Leader != 0 {
				t.Fatalf("metadata of %s: %+v", topic, mdResp.Topics)
			}

			lo := &sarama.OffsetRequest{Version: 0}
			lo.AddBlock(topic, 0, sarama.OffsetNewest, 1)
			lo.Version = sarama.NewOffsetRequest(sc.Version).Version
			loResp, err := b.GetAvailableOffsets(lo)
			if err != nil {
				t.Fatalf("list offsets: %v", err)
			}
			checkVersion(t, "ListOffsets", lo.Version, sarama.NewOffsetRequest(sc.Version).Version, want.listOffsets)
			if blk := loResp.GetBlock(topic, 0); blk == nil || blk.Err != sarama.ErrNoError || blk.Offset != 10 {
				t.Fatalf("list offsets of %s-0: %+v", topic, blk)
			}

			// Fetch goes out on the fetcher's own encoding, at the
			// version negotiateFetch picks.
			version, err := negotiateFetch(b, fetchVersion(sc.Version))
			if err != nil {
				t.Fatal(err)
			}
			checkVersion(t, "Fetch", version, fetchVersion(sc.Version), want.fetch)
			w := &wireConn{conn: conn, clientID: sc.ClientID, version: version, readTimeout: sc.Net.ReadTimeout, writeTimeout: sc.Net.WriteTimeout}
			ps := &partState{tp: zkutil.TopicPartition{Topic: topic}, pti: streamcore.NewPartitionTopicInfo(topic, 0, streamcore.QueueOf(newStream(t, 1)), 0, 0, 1<<20), epoch: -1}
			resp, err := w.roundTrip(&fetchRequest{maxBytes: 1 << 20, parts: []reqPart{{ps: ps, offset: 0}}}, nil)
			if err != nil {
				t.Fatalf("fetch v%d: %v", version, err)
			}
			blk := resp.block(topic, 0)
			if blk == nil || blk.hwm != 10 {
				t.Fatalf("fetch v%d of %s-0: block %+v", version, topic, blk)
			}
			d := decodeBlock(topic, 0, 0, 1<<20, false, blk)
			if len(d.msgs) != 10 || d.next != 10 {
				t.Fatalf("fetch v%d of %s-0 decoded %d messages, next %d; want 10 and 10", version, topic, len(d.msgs), d.next)
			}
			t.Logf("Kafka %s: Metadata v%d, ListOffsets v%d, Fetch v%d", v, md.Version, lo.Version, version)
		})
	}
}

// checkVersion checks that a request went out at the newest version both
// the client (clientMax) and the broker (brokerMax) speak.
func checkVersion(t *testing.T, api string, sent, clientMax, brokerMax int16) {
	t.Helper()
	if want := min(clientMax, brokerMax); sent != want {
		t.Fatalf("%s went out at v%d, want v%d (client up to v%d, broker up to v%d)", api, sent, want, clientMax, brokerMax)
	}
}
