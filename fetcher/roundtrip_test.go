package fetcher

import (
	"context"
	"testing"

	"github.com/IBM/sarama"
)

// TestDecodeSaramaWire runs responses through sarama's own encoder and
// decoder (MockBroker, fetch v12), for what only the wire shows: batches
// without records, which sarama drops from RecordsSet, compressed batches
// and control batches.
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
	b, err := openBroker(context.Background(), mb.Addr(), testConfig(t).withDefaults().saramaConfig(), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	fetch := func(offset int64) decoded {
		req := &sarama.FetchRequest{Version: 12, MaxBytes: 1 << 20, SessionEpoch: -1}
		req.AddBlock("t", 0, offset, 1<<20, -1)
		resp, err := b.Fetch(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Version != 12 {
			t.Fatalf("response version %d", resp.Version)
		}
		return decodeBlock("t", 0, offset, 1<<20, false, resp.GetBlock("t", 0))
	}

	d := fetch(0)
	if d.msgs != nil || d.next != 6 {
		t.Errorf("emptied batches only: msgs %v next %d, want none and 6", offsetsOf(d.msgs), d.next)
	}
	d = fetch(6)
	if want := []int64{6, 7}; !equalOffsets(offsetsOf(d.msgs), want) || d.next != 9 {
		t.Errorf("gzip batch and marker: offsets %v next %d, want %v and 9", offsetsOf(d.msgs), d.next, want)
	}
	if string(d.msgs[0].Value) != "v6" || string(d.msgs[1].Key) != "k7" {
		t.Errorf("decompressed messages %q %q", d.msgs[0].Value, d.msgs[1].Key)
	}
}
