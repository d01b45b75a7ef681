package connector

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// stwSettle is how long every partition must have come from exactly one
// member, each live member delivering some, for BenchmarkStopTheWorld's
// group to count as settled.
const stwSettle = 300 * time.Millisecond

// gapRecorder follows, for BenchmarkStopTheWorld, who delivered each
// partition and when, and measures windows: the longest gap between two
// deliveries of each partition and each member's first delivery of each
// partition from the window's start.
type gapRecorder struct {
	mu       sync.Mutex
	last     []time.Time         // partition -> latest delivery
	lastBy   []int               // partition -> member of the latest delivery
	byMember map[int][]time.Time // member -> partition -> latest delivery

	t0       time.Time           // start of the window; zero before the first mark
	maxGap   []time.Duration     // partition -> longest gap closed in the window
	gapEnd   []time.Time         // partition -> when that gap ended
	ownerAt0 []int               // partition -> member of the latest delivery before t0
	first    map[int][]time.Time // member -> partition -> first delivery in the window
}

func newGapRecorder(partitions int) *gapRecorder {
	return &gapRecorder{
		last: make([]time.Time, partitions), lastBy: make([]int, partitions), byMember: map[int][]time.Time{},
		maxGap: make([]time.Duration, partitions), gapEnd: make([]time.Time, partitions), ownerAt0: make([]int, partitions), first: map[int][]time.Time{},
	}
}

// see records that member delivered a message of partition now.
func (g *gapRecorder) see(member int, partition int32) { g.seeAt(member, partition, time.Now()) }

// seeAt records that member delivered a message of partition at at, a
// time taken elsewhere (a Java consumer's clock): it may reach the
// recorder after a later delivery of the partition, or after a window
// started later, and then counts as what it was when it happened.
func (g *gapRecorder) seeAt(member int, partition int32, at time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	p := int(partition)
	if p < 0 || p >= len(g.last) {
		return
	}
	if !g.t0.IsZero() && !at.Before(g.t0) {
		// A gap that began before t0 counts whole: it is the one the
		// event may have caused, and the baseline is measured the same
		// way.
		if gap := at.Sub(g.last[p]); !g.last[p].IsZero() && gap > g.maxGap[p] {
			g.maxGap[p], g.gapEnd[p] = gap, at
		}
		f := g.first[member]
		if f == nil {
			f = make([]time.Time, len(g.last))
			g.first[member] = f
		}
		if f[p].IsZero() || at.Before(f[p]) {
			f[p] = at
		}
	}
	if at.After(g.last[p]) {
		g.last[p], g.lastBy[p] = at, member
	}
	bm := g.byMember[member]
	if bm == nil {
		bm = make([]time.Time, len(g.last))
		g.byMember[member] = bm
	}
	if at.After(bm[p]) {
		bm[p] = at
	}
}

// mark starts a window now and returns its start.
func (g *gapRecorder) mark() time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.t0 = time.Now()
	clear(g.maxGap)
	clear(g.gapEnd)
	clear(g.first)
	copy(g.ownerAt0, g.lastBy)
	return g.t0
}

// gapWindow is what a window measured.
type gapWindow struct {
	t0, end  time.Time
	gaps     []time.Duration // partition -> longest gap, counting the one still open at end
	gapEnd   []time.Time     // partition -> when that gap ended (end if still open)
	ownerAt0 []int
	first    map[int][]time.Time
}

// window closes the window now.
func (g *gapRecorder) window() gapWindow {
	now := time.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	w := gapWindow{t0: g.t0, end: now, gaps: slices.Clone(g.maxGap), gapEnd: slices.Clone(g.gapEnd), ownerAt0: slices.Clone(g.ownerAt0), first: map[int][]time.Time{}}
	for p := range w.gaps {
		if open := now.Sub(g.last[p]); open > w.gaps[p] {
			w.gaps[p], w.gapEnd[p] = open, now
		}
	}
	for m, f := range g.first {
		w.first[m] = slices.Clone(f)
	}
	return w
}

// owners returns each partition's owner if, over the last stwSettle,
// every partition was delivered by exactly one member, a member of live,
// and every member of live delivered some.
func (g *gapRecorder) owners(live []int) ([]int, bool) {
	cutoff := time.Now().Add(-stwSettle)
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]int, len(g.last))
	busy := map[int]bool{}
	for p := range g.last {
		owner, n := -1, 0
		for m, at := range g.byMember {
			if at[p].After(cutoff) {
				owner, n = m, n+1
			}
		}
		if n != 1 || !slices.Contains(live, owner) {
			return nil, false
		}
		out[p] = owner
		busy[owner] = true
	}
	return out, len(busy) == len(live)
}

// describe tells, per partition, who delivered it and how long ago, for
// errors.
func (g *gapRecorder) describe() string {
	now := time.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	var sb strings.Builder
	for p := range g.last {
		fmt.Fprintf(&sb, "p%d:", p)
		for _, m := range slices.Sorted(maps.Keys(g.byMember)) {
			if at := g.byMember[m][p]; !at.IsZero() {
				fmt.Fprintf(&sb, " m%d %dms ago", m, now.Sub(at).Milliseconds())
			}
		}
		sb.WriteString("; ")
	}
	return sb.String()
}

// waitSettled waits until owners(live) holds, no earlier than stwSettle
// after since, and returns the owners.
func (g *gapRecorder) waitSettled(ctx context.Context, live []int, since time.Time) ([]int, error) {
	for {
		if time.Since(since) >= stwSettle {
			if owners, ok := g.owners(live); ok {
				return owners, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("members %v did not settle: %w: %s", live, ctx.Err(), g.describe())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// ownedLog is a RebalanceListener that records, each time a member's
// partitions change, when and what it owns from then on: the partitions
// it was told to start (BeforeStartingFetchers)
// less those it was told to release (BeforeReleasingPartitions). With the
// eager protocol every rebalance releases everything and starts the new
// assignment; with the cooperative one only what moves.
type ownedLog struct {
	topic string
	mu    sync.Mutex
	owned map[int32]bool
	steps []ownedStep
}

// ownedStep is the member's partitions from at on.
type ownedStep struct {
	at    time.Time
	owned []int32 // sorted
}

var _ RebalanceListener = (*ownedLog)(nil)

// BeforeReleasingPartitions records that the member gives released up.
func (l *ownedLog) BeforeReleasingPartitions(_ context.Context, _ *ConsumerConnector, released map[string][]int32, _ bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range released[l.topic] {
		delete(l.ensure(), p)
	}
	l.step()
}

// BeforeStartingFetchers records that the member starts gained.
func (l *ownedLog) BeforeStartingFetchers(_ context.Context, _ *ConsumerConnector, gained map[string][]int32) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range gained[l.topic] {
		l.ensure()[p] = true
	}
	l.step()
}

// record records that the member owns owned (sorted) from at on, as a
// Java consumer's rebalance callbacks told it.
func (l *ownedLog) record(at time.Time, owned []int32) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.steps = append(l.steps, ownedStep{at: at, owned: owned})
}

func (l *ownedLog) ensure() map[int32]bool {
	if l.owned == nil {
		l.owned = map[int32]bool{}
	}
	return l.owned
}

func (l *ownedLog) step() {
	l.steps = append(l.steps, ownedStep{at: time.Now(), owned: slices.Sorted(maps.Keys(l.owned))})
}

// heldSince returns when the member came to own exactly want and has
// owned it since, if that is after t0; t0 if it already owned want at t0;
// ok false if it does not own want now.
func (l *ownedLog) heldSince(t0 time.Time, want []int32) (at time.Time, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.steps) == 0 || !slices.Equal(l.steps[len(l.steps)-1].owned, want) {
		return time.Time{}, false
	}
	at = l.steps[len(l.steps)-1].at
	for i := len(l.steps) - 2; i >= 0 && slices.Equal(l.steps[i].owned, want); i-- {
		at = l.steps[i].at
	}
	if at.Before(t0) {
		at = t0
	}
	return at, true
}
