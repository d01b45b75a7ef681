package fetch

import (
	"cmp"
	"slices"
	"testing"
)

// javaTxns is the Java consumer's bookkeeping of aborted transactions,
// as the decoder had it before transactions: the list by first offset
// (a priority queue there), moved into a set of aborted producers as
// batches reach them, a producer leaving the set at its abort marker.
type javaTxns struct {
	pending []abortedTxn
	aborted map[int64]bool
}

func (j *javaTxns) init(list []abortedTxn) {
	j.pending = slices.Clone(list)
	slices.SortStableFunc(j.pending, func(a, b abortedTxn) int { return cmp.Compare(a.firstOffset, b.firstOffset) })
	j.aborted = map[int64]bool{}
}

func (j *javaTxns) skip(pid, last int64, control, abortMarker, transactional bool) bool {
	for len(j.pending) > 0 && j.pending[0].firstOffset <= last {
		j.aborted[j.pending[0].producerID] = true
		j.pending = j.pending[1:]
	}
	if control {
		if abortMarker {
			delete(j.aborted, pid)
		}
		return true
	}
	return transactional && j.aborted[pid]
}

// FuzzTransactions checks transactions, which looks aborted transactions
// up in the response's own list sorted in place, against the Java
// consumer's bookkeeping, on any list and any run of batches (producers
// and offsets from the fuzzer's bytes, offsets increasing). Decoding a
// block a second time gives the same answers.
func FuzzTransactions(f *testing.F) {
	f.Add([]byte{1, 5, 2, 0, 1, 20}, []byte{1, 3, 0, 2, 4, 1, 1, 2, 2, 1, 6, 3, 1, 1, 1})
	f.Add([]byte{1, 0, 1, 10, 1, 30, 2, 5}, []byte{1, 2, 1, 1, 2, 3, 2, 5, 1, 1, 5, 2, 1, 9, 1, 2, 3, 1})
	f.Fuzz(func(t *testing.T, listBytes, batches []byte) {
		var list []abortedTxn
		for i := 0; i+1 < len(listBytes) && len(list) < 200; i += 2 {
			list = append(list, abortedTxn{producerID: int64(listBytes[i] % 4), firstOffset: int64(listBytes[i+1]) - 3})
		}
		raw := txnList(list...)
		for i := range list {
			list[i].firstOffset = max(list[i].firstOffset, 0) // as parse leaves them
		}
		var j javaTxns
		j.init(list)
		var answers []bool
		for round := range 2 {
			var tx transactions
			tx.init(raw)
			if round == 1 {
				j.init(list)
			}
			last := int64(-1)
			for i := 0; i+2 < len(batches); i += 3 {
				pid := int64(batches[i] % 4)
				last += 1 + int64(batches[i+1]%8)
				kind := batches[i+2] % 4
				control, abortMarker, transactional := kind == 2 || kind == 3, kind == 3, kind != 0
				want := j.skip(pid, last, control, abortMarker, transactional)
				got := tx.skip(pid, last, control, abortMarker, transactional)
				if got != want {
					t.Fatalf("round %d: list %v, batch of producer %d ending at %d (control %v, abort marker %v, transactional %v): skip %v, want %v",
						round, list, pid, last, control, abortMarker, transactional, got, want)
				}
				if round == 0 {
					answers = append(answers, got)
				} else if answers[i/3] != got {
					t.Fatalf("batch %d: %v decoding the block again, %v before", i/3, got, answers[i/3])
				}
			}
		}
	})
}
