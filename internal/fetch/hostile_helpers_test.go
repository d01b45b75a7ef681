package fetch

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"runtime"
	"sync"

	"github.com/IBM/sarama"
	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// This file builds what no broker sends: record batches and messages with
// lying headers, checksums that match them, and payloads that inflate.

// rawBatch returns a v2 record batch at base with the given attributes,
// last offset delta, record count and records (already compressed if
// attrs say so), its length and CRC-32C right.
func rawBatch(base int64, attrs int16, lastDelta, count int32, records []byte) []byte {
	b := binary.BigEndian.AppendUint64(nil, uint64(base))
	b = binary.BigEndian.AppendUint32(b, uint32(recordBatchOverhead-12+len(records)))
	b = binary.BigEndian.AppendUint32(b, 0) // leader epoch
	b = append(b, 2)
	b = binary.BigEndian.AppendUint32(b, 0) // crc, below
	b = binary.BigEndian.AppendUint16(b, uint16(attrs))
	b = binary.BigEndian.AppendUint32(b, uint32(lastDelta))
	b = binary.BigEndian.AppendUint64(b, uint64(t0.UnixMilli()))
	b = binary.BigEndian.AppendUint64(b, uint64(t0.UnixMilli()))
	b = binary.BigEndian.AppendUint64(b, ^uint64(0)) // producer id -1
	b = binary.BigEndian.AppendUint16(b, 0xffff)
	b = binary.BigEndian.AppendUint32(b, 0xffffffff)
	b = binary.BigEndian.AppendUint32(b, uint32(count))
	b = append(b, records...)
	fixCRC(b)
	return b
}

// fixCRC sets the CRC-32C of the record batch b starts with to match it.
func fixCRC(b []byte) {
	n := 12 + int(binary.BigEndian.Uint32(b[batchLengthAt:]))
	binary.BigEndian.PutUint32(b[batchCRCAt:], crc32.Checksum(b[batchAttrsAt:n], castagnoli))
}

// rawRecords encodes records with the given offset deltas and values, no
// key, no header.
func rawRecords(deltas []int64, value func(int) []byte) []byte {
	var out []byte
	for i, d := range deltas {
		body := []byte{0}
		body = binary.AppendVarint(body, 0) // timestamp delta
		body = binary.AppendVarint(body, d)
		body = binary.AppendVarint(body, -1) // key
		body = appendVarBytes(body, value(i))
		body = binary.AppendVarint(body, 0) // headers
		out = binary.AppendVarint(out, int64(len(body)))
		out = append(out, body...)
	}
	return out
}

// seq returns 0..n-1.
func seq(n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(i)
	}
	return out
}

// rawMessage returns a v0/v1 message at offset with any magic byte and
// attributes, its CRC-32 right.
func rawMessage(offset int64, magic int8, attrs byte, key, value []byte) []byte {
	b := binary.BigEndian.AppendUint64(nil, uint64(offset))
	b = binary.BigEndian.AppendUint32(b, 0) // length, below
	b = binary.BigEndian.AppendUint32(b, 0) // crc, below
	b = append(b, byte(magic), attrs)
	if magic >= 1 {
		b = binary.BigEndian.AppendUint64(b, uint64(t0.UnixMilli()))
	}
	b = appendBytes32(b, key)
	b = appendBytes32(b, value)
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	binary.BigEndian.PutUint32(b[msgCRCAt:], crc32.ChecksumIEEE(b[msgMagicAt:]))
	return b
}

// allocated returns the bytes the heap allocated while f ran (every
// goroutine's; a unit test has few others).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// inflating returns, once per (codec, records, size), the records of a
// batch of n records of size zero bytes each, compressed with codec:
// legal data that inflates by a factor of hundreds or more.
func inflating(codec sarama.CompressionCodec, n, size int) []byte {
	type key struct {
		codec   sarama.CompressionCodec
		n, size int
	}
	inflatingMu.Lock()
	defer inflatingMu.Unlock()
	k := key{codec, n, size}
	if b, ok := inflatingCache[k]; ok {
		return b
	}
	value := make([]byte, size)
	b := compress(codec, rawRecords(seq(n), func(int) []byte { return value }))
	inflatingCache[k] = b
	return b
}

var (
	inflatingMu    sync.Mutex
	inflatingCache = map[any][]byte{}
)

const mib = 1 << 20

// abortedTxn is an aborted transaction of a fetch response.
type abortedTxn struct {
	producerID, firstOffset int64
}

// txnList returns txns as a block's list of aborted transactions, as
// parse leaves it.
func txnList(txns ...abortedTxn) abortedTxns {
	var b []byte
	for _, x := range txns {
		b = binary.BigEndian.AppendUint64(b, uint64(x.producerID))
		b = binary.BigEndian.AppendUint64(b, uint64(max(x.firstOffset, 0)))
	}
	return b
}

// expectTopics makes w read responses as answers to a request for
// topics t0, t1, ... with parts[i] partitions each (0, 1, ...), of fetch
// size size, as if it had encoded one: the partitions encodeResponse
// writes.
func expectTopics(w *wireConn, size int32, parts ...int) []reqPart {
	var reqs []reqPart
	for i, n := range parts {
		topic := fmt.Sprintf("t%d", i)
		for p := range int32(n) {
			pti := streamcore.NewPartitionTopicInfo(topic, p, nil, 0, 0, size)
			reqs = append(reqs, reqPart{ps: &partState{tp: zkutil.TopicPartition{Topic: topic, Partition: p}, pti: pti, epoch: -1}})
		}
	}
	w.ix.reset(reqs)
	for i := range reqs {
		w.ix.add(i)
	}
	return reqs
}
