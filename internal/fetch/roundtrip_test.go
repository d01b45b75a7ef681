package fetch

import (
	"context"
	"testing"

	"github.com/IBM/sarama"
	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// TestDecodeSaramaWire runs responses encoded by sarama (MockBroker, fetch
// v12) through the fetcher's own request encoder and response decoder:
// batches without records, compressed batches and control batches.
func TestDecodeSaramaWire(t *testing.T) {
	response := func(batches ...*sarama.RecordBatch) *sarama.FetchResponse {
		resp := &sarama.FetchResponse{Version: 12}
		resp.AddError("t", 0, sarama.ErrNoError)
		blk := resp.GetBlock("t", 0)
		blk.HighWaterMarkOffset = 100
		for _, b := range batches {
			blk.RecordsSet = append(blk.RecordsSet, &sarama.Records{RecordBatch: b})
		}
		return resp
	}
	emptied := func(first int64, lastDelta int32) *sarama.RecordBatch {
		return &sarama.RecordBatch{Version: 2, FirstOffset: first, LastOffsetDelta: lastDelta, FirstTimestamp: t0, MaxTimestamp: t0, ProducerID: 1}
	}
	gz := batch(5, 0, 1, 2)
	gz.Codec = sarama.CompressionGZIP
	marker := controlBatch(8, 3, false)
	marker.MaxTimestamp = t0

	mb := sarama.NewMockBroker(t, 0)
	defer mb.Close()
	mb.SetHandlerByMap(map[string]sarama.MockResponse{
		"ApiVersionsRequest": mockAPIVersions(t),
		"FetchRequest": sarama.NewMockSequence(
			response(emptied(0, 4), emptied(5, 0)),
			response(gz, marker, emptied(9, 1)),
		),
	})
	sc := testConfig(t).withDefaults().saramaConfig()
	b, conn, err := openBrokerConn(context.Background(), mb.Addr(), sc, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	version, err := negotiateFetch(b, 12)
	if err != nil || version != 12 {
		t.Fatalf("negotiated fetch v%d, %v; want v12", version, err)
	}
	w := &wireConn{conn: conn, clientID: "test", version: version, readTimeout: sc.Net.ReadTimeout, writeTimeout: sc.Net.WriteTimeout}
	ps := &partState{tp: zkutil.TopicPartition{Topic: "t"}, pti: streamcore.NewPartitionTopicInfo("t", 0, streamcore.QueueOf(newStream(t, 1)), 0, 0, 1<<20), epoch: -1}
	fetch := func(offset int64) decoded {
		resp, err := w.roundTrip(&fetchRequest{maxBytes: 1 << 20, parts: []reqPart{{ps: ps, offset: offset}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		blk := resp.block("t", 0)
		if blk == nil || blk.hwm != 100 {
			t.Fatalf("block %+v", blk)
		}
		return decodeBlock("t", 0, offset, 1<<20, false, blk)
	}

	d := fetch(0)
	if d.msgs != nil || d.next != 6 {
		t.Errorf("emptied batches only: msgs %v next %d, want none and 6", offsetsOf(d.msgs), d.next)
	}
	d = fetch(6)
	// The emptied batch at the end is complete: the partition moves past
	// it, as Java's consumer does (sarama's decoder left it out).
	if want := []int64{6, 7}; !equalOffsets(offsetsOf(d.msgs), want) || d.next != 11 {
		t.Errorf("gzip batch and marker: offsets %v next %d, want %v and 11", offsetsOf(d.msgs), d.next, want)
	}
	if string(d.msgs[0].Value) != "v6" || string(d.msgs[1].Key) != "k7" {
		t.Errorf("decompressed messages %q %q", d.msgs[0].Value, d.msgs[1].Key)
	}
}
