//go:build matrix

package fetcher

import (
	"context"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/zkconsumer/zkconsumer/internal/testcluster"
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

// TestNegotiatedVersions (make test-matrix) sends the fetcher's Fetch,
// ListOffsets and Metadata requests, built as the fetcher builds them with
// the default configuration, to a broker of every release, and checks the
// version each went out with: the newest both sides speak. It also checks
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
			topic := newTopic(ctx, t, c, "versions", 1, 1)
			produce(ctx, t, c, topic, 10, testcluster.ProduceOptions{Partition: 0})

			b, err := openBroker(ctx, c.BrokerAddrs()[0], sc, 0, nil)
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

			fr := &sarama.FetchRequest{
				Version: fetchVersion(sc.Version), MaxWaitTime: 0, MinBytes: 1, MaxBytes: minRequestMaxBytes,
				SessionID: 0, SessionEpoch: -1,
			}
			fr.AddBlock(topic, 0, 0, 1<<20, -1)
			fResp, err := b.Fetch(fr)
			if err != nil {
				t.Fatalf("fetch: %v", err)
			}
			checkVersion(t, "Fetch", fr.Version, fetchVersion(sc.Version), want.fetch)
			blk := fResp.GetBlock(topic, 0)
			if blk == nil || blk.Err != sarama.ErrNoError {
				t.Fatalf("fetch of %s-0: %+v", topic, blk)
			}
			n := 0
			for _, rs := range blk.RecordsSet {
				if rs.RecordBatch != nil {
					n += len(rs.RecordBatch.Records)
				} else if rs.MsgSet != nil {
					n += len(rs.MsgSet.Messages)
				}
			}
			if n != 10 {
				t.Fatalf("fetch of %s-0 at v%d returned %d messages, want 10", topic, fr.Version, n)
			}
			t.Logf("Kafka %s: Metadata v%d, ListOffsets v%d, Fetch v%d", v, md.Version, lo.Version, fr.Version)
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
