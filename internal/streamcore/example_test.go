package streamcore_test

import (
	"context"
	"fmt"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
)

// A fetcher enqueues one partition's fetch; the application reads the
// stream with Next. Asking for the next message marks the previous one
// consumed, so the consumed offset (what a commit would store) trails the
// message being processed.
func ExampleKafkaStream_Next() {
	s, ctl, err := streamcore.NewKafkaStream(2, 0) // consumer timeout 0: do not wait
	if err != nil {
		panic(err)
	}
	defer ctl.Shutdown()

	// Consumption starts at the committed offset 3.
	pti := streamcore.NewPartitionTopicInfo("events", 0, streamcore.QueueOf(s), 3, 3, 1<<20)
	var msgs []*streamcore.Message
	for off := int64(2); off < 6; off++ { // a compressed batch starting early
		msgs = append(msgs, &streamcore.Message{Topic: "events", Offset: off, Value: []byte{'a' + byte(off)}})
	}
	if err := pti.Enqueue(context.Background(), msgs, 6); err != nil {
		panic(err)
	}

	for {
		m, err := s.Next(context.Background())
		if err != nil { // the timeout: nothing more queued
			break
		}
		fmt.Printf("offset %d value %s (consumed offset %d)\n", m.Offset, m.Value, pti.ConsumedOffset())
	}
	fmt.Println("commit", pti.ConsumedOffset())
	// Output:
	// offset 3 value d (consumed offset 3)
	// offset 4 value e (consumed offset 4)
	// offset 5 value f (consumed offset 5)
	// commit 6
}
