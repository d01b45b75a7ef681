package chaos

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
)

// tracker follows the member logs while the run goes on: which offsets have
// been delivered (for the drain at the end) and which consumer id each
// incarnation registered with (for the final owner check).
type tracker struct {
	log *slog.Logger

	mu         sync.Mutex
	tails      map[string]*logTail // by incarnation key
	order      []string
	delivered  map[topicPartition]*bitset
	deliveries int
	ids        map[string]string // incarnation key -> consumer id
	// assigned is each incarnation's current assignment, as its listener
	// reported it: what it started, less what it released since (set once
	// it reported one).
	assigned map[string]map[topicPartition]bool
}

func newTracker(log *slog.Logger) *tracker {
	return &tracker{
		log:       log,
		tails:     map[string]*logTail{},
		delivered: map[topicPartition]*bitset{},
		ids:       map[string]string{},
		assigned:  map[string]map[topicPartition]bool{},
	}
}

// follow adds an incarnation's log.
func (t *tracker) follow(key, path string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.tails[key]; !ok {
		t.tails[key] = &logTail{path: path}
		t.order = append(t.order, key)
	}
}

// poll reads what the members wrote since the last poll.
func (t *tracker) poll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, key := range t.order {
		err := t.tails[key].poll(func(r *Record) {
			switch r.Kind {
			case RecDelivery:
				tp := topicPartition{r.Topic, r.Partition}
				b := t.delivered[tp]
				if b == nil {
					b = &bitset{}
					t.delivered[tp] = b
				}
				b.set(r.Offset)
				t.deliveries++
			case RecStart:
				t.ids[key] = r.ConsumerID
			case RecAssign:
				// What a listener is told to start adds to what it had:
				// under a cooperative protocol a generation that continues
				// the last starts only the partitions it gains, the ones it
				// keeps were never released. (An eager generation released
				// everything before, so adding is replacing there.)
				cur := t.assigned[key]
				if cur == nil {
					cur = map[topicPartition]bool{}
					t.assigned[key] = cur
				}
				for topic, ps := range r.Parts {
					for _, p := range ps {
						cur[topicPartition{topic, p}] = true
					}
				}
			case RecRelease:
				for topic, ps := range r.Parts {
					for _, p := range ps {
						delete(t.assigned[key], topicPartition{topic, p})
					}
				}
			}
		})
		if err != nil {
			t.log.Warn("read member log", "member", key, "err", err)
		}
	}
}

// assignment returns incarnation key's current assignment; ok is false
// before it reported one.
func (t *tracker) assignment(key string) (map[topicPartition]bool, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	a, ok := t.assigned[key]
	return maps.Clone(a), ok
}

// consumerID returns the consumer id incarnation key registered with.
func (t *tracker) consumerID(key string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.ids[key]
}

// counts returns the deliveries seen and the distinct offsets among them.
func (t *tracker) counts() (deliveries, distinct int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, b := range t.delivered {
		distinct += b.count
	}
	return t.deliveries, distinct
}

// undelivered counts the acknowledged offsets nobody has delivered yet and
// names a few of them.
func (t *tracker) undelivered(acked map[topicPartition][]int64) (n int, sample []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tps := make([]topicPartition, 0, len(acked))
	for tp := range acked {
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, compareTP)
	for _, tp := range tps {
		b := t.delivered[tp]
		for _, off := range acked[tp] {
			if b == nil || !b.has(off) {
				n++
				if len(sample) < 5 {
					sample = append(sample, fmt.Sprintf("%s@%d", tp, off))
				}
			}
		}
	}
	return n, sample
}

func compareTP(a, b topicPartition) int {
	if a.Topic != b.Topic {
		if a.Topic < b.Topic {
			return -1
		}
		return 1
	}
	return int(a.Partition) - int(b.Partition)
}

// bitset is a growable set of non-negative offsets.
type bitset struct {
	words []uint64
	count int
}

func (b *bitset) set(i int64) {
	if i < 0 {
		return
	}
	w := int(i / 64)
	if w >= len(b.words) {
		b.words = append(b.words, make([]uint64, w+1-len(b.words)+len(b.words)/4)...)
	}
	bit := uint64(1) << (uint(i) % 64)
	if b.words[w]&bit == 0 {
		b.words[w] |= bit
		b.count++
	}
}

func (b *bitset) has(i int64) bool {
	if i < 0 {
		return false
	}
	w := int(i / 64)
	return w < len(b.words) && b.words[w]&(uint64(1)<<(uint(i)%64)) != 0
}
