package fetch

import (
	"encoding/binary"
	"math"
	"sort"
)

// abortedTxns is a partition's list of aborted transactions as its fetch
// response holds it, nothing copied: entries of abortedTxnSize bytes, a
// producer id and the transaction's first offset (int64s, big-endian),
// in the response buffer. parse leaves them so (the flexible versions put
// tagged fields after each entry, which parse drops by moving the entries
// together) with no first offset below zero; the decoder sorts them in
// place and marks the ones it is done with (see transactions).
type abortedTxns []byte

// abortedTxnSize is the size of an entry of abortedTxns.
const abortedTxnSize = 16

// closedTxn marks an entry whose transaction ended (its abort marker was
// seen): it is set in the first offset, which parse leaves non-negative.
const closedTxn = math.MinInt64

func (a abortedTxns) len() int { return len(a) / abortedTxnSize }
func (a abortedTxns) producer(i int) int64 {
	return int64(binary.BigEndian.Uint64(a[i*abortedTxnSize:]))
}
func (a abortedTxns) first(i int) int64 {
	return int64(binary.BigEndian.Uint64(a[i*abortedTxnSize+8:]))
}
func (a abortedTxns) setFirst(i int, v int64) {
	binary.BigEndian.PutUint64(a[i*abortedTxnSize+8:], uint64(v))
}

// Sorting by producer, then first offset (closed ones first: the mark
// makes them negative).
func (a abortedTxns) Len() int { return a.len() }
func (a abortedTxns) Less(i, j int) bool {
	pi, pj := a.producer(i), a.producer(j)
	return pi < pj || (pi == pj && a.first(i) < a.first(j))
}
func (a abortedTxns) Swap(i, j int) {
	x, y := a[i*abortedTxnSize:(i+1)*abortedTxnSize], a[j*abortedTxnSize:(j+1)*abortedTxnSize]
	var t [abortedTxnSize]byte
	copy(t[:], x)
	copy(x, y)
	copy(y, t[:])
}

// transactions tracks aborted transactions while walking the batches of a
// read_committed response, with the semantics of Kafka's Java consumer: a
// producer's transactional batches are aborted from the first offset the
// broker lists for a transaction of it until its abort marker. The Java
// consumer moves listed transactions into a set of aborted producers as
// the batches reach their first offsets, and takes a producer out of it at
// its abort marker; so a batch of producer p ending at offset last is
// aborted when the list holds a transaction of p whose first offset lies
// after p's last abort marker so far and at or before last. That is what
// skip looks up, in the list itself sorted by producer and first offset:
// the transactions up to an abort marker are marked closed where they
// are, so the first unclosed one of p answers. It allocates nothing, and
// costs a binary search per batch.
type transactions struct {
	list abortedTxns
}

// init takes a block's list: it clears the marks of an earlier decoding
// of the block and sorts the entries, in place.
func (t *transactions) init(list abortedTxns) {
	t.list = list
	sorted := true
	for i := range list.len() {
		if f := list.first(i); f < 0 {
			list.setFirst(i, f&math.MaxInt64)
		}
		if i > 0 && list.Less(i, i-1) {
			sorted = false
		}
	}
	if !sorted {
		sort.Sort(list)
	}
}

// open returns the position of producer pid's first transaction not
// closed, or of the next producer's when it has none.
func (t *transactions) open(pid int64) int {
	l := t.list
	return sort.Search(l.len(), func(i int) bool {
		p := l.producer(i)
		return p > pid || (p == pid && l.first(i) >= 0)
	})
}

// skip reports whether a batch of producer pid ending at last is to be
// dropped because it belongs to an aborted transaction. It also consumes
// the producer's abort marker. Control batches are dropped by the caller
// anyway.
func (t *transactions) skip(pid, last int64, control, abortMarker, transactional bool) bool {
	if t.list.len() == 0 {
		return control
	}
	if control {
		if abortMarker {
			// Every transaction of pid listed up to the marker ends.
			l := t.list
			for i := t.open(pid); i < l.len() && l.producer(i) == pid && l.first(i) <= last; i++ {
				l.setFirst(i, l.first(i)|closedTxn)
			}
		}
		return true
	}
	if !transactional {
		return false
	}
	i := t.open(pid)
	return i < t.list.len() && t.list.producer(i) == pid && t.list.first(i) <= last
}
