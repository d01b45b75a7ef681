package fetch

import (
	"errors"
	"fmt"
)

// The size of a fetch response is bounded by its request, and the fetcher
// reads no larger one into memory: see responseLimit. This is the R of the
// memory bound of docs/tuning.md.

// kafkaMessageMaxBytes is the default of a broker's message.max.bytes
// (Kafka 2.0 and later): 1 MiB and the 12 bytes of a batch's offset and
// length.
const kafkaMessageMaxBytes = 1<<20 + 12

const (
	// respHeaderOverhead bounds what a response holds besides its
	// topics: throttle time, error code, session id, the array's length
	// and tagged fields.
	respHeaderOverhead = 64
	// respTopicOverhead bounds what a topic costs besides its name: the
	// name's length, the partitions' array length, tagged fields.
	respTopicOverhead = 16
	// respPartitionOverhead bounds what a partition costs besides its
	// records and aborted transactions: partition, error code, high
	// watermark, last stable and log start offsets, the lengths of the
	// transactions' array and of the records, preferred read replica,
	// and the tagged fields of fetch v12 (diverging epoch, current
	// leader, snapshot id: 44 bytes together).
	respPartitionOverhead = 128
	// abortedTxnWire is the most an aborted transaction takes in a
	// response: producer id, first offset, a tagged-field count.
	abortedTxnWire = abortedTxnSize + 1
	// spanningTxns is how many aborted transactions a partition may list
	// beyond those that start in its records: transactions that started
	// before the fetch offset, one per producer at most, and the one of
	// the batch the fetch size cut.
	spanningTxns = 64
)

// errResponseTooLarge is wrapped by responseSizeError.
var errResponseTooLarge = errors.New("fetch response larger than its request allows")

// responseSizeError refuses a fetch response larger than its request
// allows (see responseLimit). The response was read past, not kept.
type responseSizeError struct {
	size, limit int64
	partitions  int
}

func (e *responseSizeError) Error() string {
	return fmt.Sprintf("fetch response of %d bytes for %d partitions, more than the %d bytes the request allows (the partitions' fetch sizes, fetch.message.max.bytes, with one batch of up to the largest fetch size or %d bytes sent whole beyond them), not read",
		e.size, e.partitions, e.limit, kafkaMessageMaxBytes)
}

func (e *responseSizeError) Unwrap() error { return errResponseTooLarge }

// responseLimit is the largest response body (with its correlation id)
// that a broker may send for req, at most maxResponseSize:
//
//   - the records: each partition's fetch size S, together at most the
//     request's max bytes (fetch v3+); and from fetch v3 on (KIP-74) one
//     batch beyond them, which a broker sends whole when it is the first
//     of the first partition with data even if it exceeds those limits:
//     M = max(the largest S, kafkaMessageMaxBytes), the batch a broker
//     with Kafka's default message.max.bytes can hold, or a consumer can
//     ask for (Kafka requires fetch.message.max.bytes to be at least the
//     brokers' message.max.bytes);
//   - with read_committed (fetch v4+), each partition's aborted
//     transactions: one per batch its records can hold (a transaction
//     listed starts at a batch of the records, or before the fetch
//     offset) and spanningTxns more;
//   - the structure: respHeaderOverhead, respTopicOverhead and the name
//     of each topic, respPartitionOverhead per partition.
//
// req is the request last encoded (w.ix lists its partitions by topic).
//
// A honest broker never sends more. A larger response is refused (see
// wireConn.roundTrip): the fetcher then asks for each partition alone,
// and one whose first batch is larger than M alone stops with
// ErrMessageTooLarge, as a message larger than its fetch size does.
func (w *wireConn) responseLimit(req *fetchRequest) int64 {
	v := w.version
	limit := int64(respHeaderOverhead + 4)
	var (
		sum, largest int64
		topic        string
	)
	for k, i := range w.ix.order {
		s := int64(max(req.size(int(i)), 0))
		sum += s
		largest = max(largest, s)
		limit += respPartitionOverhead
		if t := req.parts[i].ps.tp.Topic; k == 0 || t != topic {
			limit += respTopicOverhead + int64(len(t))
			topic = t
		}
		if v >= 4 && req.readCommitted {
			limit += abortedTxnWire * (s/recordBatchOverhead + spanningTxns)
		}
	}
	if v >= 3 {
		sum = min(sum, int64(max(req.maxBytes, 0)))
		sum += max(largest, kafkaMessageMaxBytes)
	}
	return min(limit+sum, maxResponseSize)
}
