package chaos

import (
	"fmt"
	"slices"
	"sort"
)

// Overlaps measures, per partition, the time during which intervals of two
// different member incarnations overlapped.
type Overlaps struct {
	// TotalMs sums, over partitions, the time covered by at least two
	// incarnations' intervals.
	TotalMs float64
	// Messages counts deliveries made at an instant inside another
	// incarnation's interval of the same partition (delivery tenures only).
	Messages int
	// Partitions is the number of partitions with any overlap.
	Partitions int
	// Instances are the overlapping pairs, longest first.
	Instances []Overlap
}

// Overlap is one pair of incarnations whose intervals of a partition
// overlapped.
type Overlap struct {
	Partition string
	// Earlier is the incarnation whose tenure (or period) began first:
	// usually the stale owner. Later is the other.
	Earlier, Later string
	Start, End     int64 // the overlap, Unix nanoseconds
	Ms             float64
	// Messages delivered by either incarnation within the overlap.
	Messages int
	// Fault is the latest fault that hit one of the two incarnations
	// shortly before the overlap, or else the latest fault before it; 0
	// if none.
	Fault int
}

// interval is a closed time interval of one incarnation. since is when
// the tenure or period it was cut from began.
type interval struct {
	inc   int32
	a, b  int64
	since int64
}

// checkOwnership computes double ownership from delivery tenures and the
// secondary figure from listener periods.
func (v *verifier) checkOwnership() {
	res := v.res
	listener := map[topicPartition][]interval{}
	for i, il := range v.incs {
		for tp, ps := range il.periods {
			for _, p := range ps {
				end := min(p.end, il.stopTime)
				listener[tp] = append(listener[tp], il.running(int32(i), p.start, end)...)
			}
		}
	}
	for _, tp := range sortedTPs(v.dels, nil) {
		byTS := slices.Clone(v.dels[tp])
		slices.SortStableFunc(byTS, func(a, b delivery) int { return cmpInt64(a.ts, b.ts) })
		tenures := v.tenures(tp, byTS)
		v.overlaps(&res.Double, tp, tenures, byTS)
	}
	for _, tp := range sortedIntervalTPs(listener) {
		v.overlaps(&res.Listener, tp, listener[tp], nil)
	}
	for _, o := range []*Overlaps{&res.Double, &res.Listener} {
		sort.Slice(o.Instances, func(i, j int) bool {
			a, b := o.Instances[i], o.Instances[j]
			if a.Ms != b.Ms {
				return a.Ms > b.Ms
			}
			return a.Messages > b.Messages
		})
	}
}

// tenures groups the deliveries of tp (sorted by time) by incarnation and
// ownership period and returns each group's [first, last] without the
// incarnation's frozen windows. It also counts deliveries made outside any
// ownership period.
func (v *verifier) tenures(tp topicPartition, byTS []delivery) []interval {
	type key struct {
		inc    int32
		period int // index of the period, -1 before the first
	}
	span := map[key]*interval{}
	var keys []key
	for _, d := range byTS {
		il := v.incs[d.inc]
		ps := il.periods[tp]
		pi := il.periodIndex(tp, d.ts)
		if pi < 0 || (ps[pi].released && d.ts > ps[pi].end) {
			v.res.OutsideOwnership++
			if len(v.res.OutsideSample) < 10 {
				v.res.OutsideSample = append(v.res.OutsideSample, fmt.Sprintf("%s@%d by %s at %s",
					tp, d.off, il.inc.Key(), v.clock(d.ts)))
			}
		}
		k := key{d.inc, pi}
		s := span[k]
		if s == nil {
			s = &interval{inc: d.inc, a: d.ts, b: d.ts, since: d.ts}
			span[k] = s
			keys = append(keys, k)
		}
		s.b = d.ts
	}
	var out []interval
	for _, k := range keys {
		s := span[k]
		out = append(out, v.incs[k.inc].running(k.inc, s.a, s.b)...)
	}
	return out
}

// running cuts [a, b] into the parts during which the incarnation was not
// frozen by SIGSTOP.
func (il *incLog) running(inc int32, a, b int64) []interval {
	parts := []interval{{inc, a, b, a}}
	for _, w := range il.frozen {
		var next []interval
		for _, p := range parts {
			if w[1] < p.a || w[0] > p.b {
				next = append(next, p)
				continue
			}
			if p.a < w[0] {
				next = append(next, interval{inc, p.a, w[0], a})
			}
			if p.b > w[1] {
				next = append(next, interval{inc, w[1], p.b, a})
			}
		}
		parts = next
	}
	return parts
}

// overlaps adds to o the overlaps among ivs, the intervals of tp. With
// byTS (the deliveries of tp sorted by time) it also counts deliveries
// inside another incarnation's interval.
func (v *verifier) overlaps(o *Overlaps, tp topicPartition, ivs []interval, byTS []delivery) {
	if len(ivs) < 2 {
		return
	}
	slices.SortFunc(ivs, func(x, y interval) int { return cmpInt64(x.a, y.a) })
	ms := coveredTwice(ivs)
	found := ms > 0
	o.TotalMs += ms
	if byTS != nil {
		inside := make([]bool, len(byTS))
		for _, iv := range ivs {
			lo := sort.Search(len(byTS), func(i int) bool { return byTS[i].ts >= iv.a })
			for k := lo; k < len(byTS) && byTS[k].ts <= iv.b; k++ {
				if byTS[k].inc != iv.inc {
					inside[k] = true
				}
			}
		}
		for _, in := range inside {
			if in {
				o.Messages++
				found = true
			}
		}
	}
	for i := range ivs {
		for j := i + 1; j < len(ivs) && ivs[j].a <= ivs[i].b; j++ {
			x, y := ivs[i], ivs[j]
			if x.inc == y.inc {
				continue
			}
			start, end := max(x.a, y.a), min(x.b, y.b)
			if start > end {
				continue
			}
			if y.since < x.since {
				x, y = y, x // the stale owner first
			}
			earlier, later := v.res.Incarnations[x.inc].Key(), v.res.Incarnations[y.inc].Key()
			inst := Overlap{
				Partition: tp.String(), Earlier: earlier, Later: later,
				Start: start, End: end, Ms: float64(end-start) / 1e6,
				Fault: v.faultBefore(start, earlier, later),
			}
			if byTS != nil {
				lo := sort.Search(len(byTS), func(k int) bool { return byTS[k].ts >= start })
				for k := lo; k < len(byTS) && byTS[k].ts <= end; k++ {
					if byTS[k].inc == x.inc || byTS[k].inc == y.inc {
						inst.Messages++
					}
				}
			}
			if inst.Ms > 0 || inst.Messages > 0 {
				o.Instances = append(o.Instances, inst)
			}
		}
	}
	if found {
		o.Partitions++
	}
}

// coveredTwice returns the milliseconds during which at least two of ivs
// (sorted by start) are active.
func coveredTwice(ivs []interval) float64 {
	type edge struct {
		t int64
		d int
	}
	edges := make([]edge, 0, 2*len(ivs))
	for _, iv := range ivs {
		edges = append(edges, edge{iv.a, +1}, edge{iv.b, -1})
	}
	// At equal times ends come first: intervals that only touch do not
	// overlap.
	slices.SortFunc(edges, func(x, y edge) int {
		if x.t != y.t {
			return cmpInt64(x.t, y.t)
		}
		return x.d - y.d
	})
	var total int64
	active := 0
	var since int64
	for _, e := range edges {
		if active >= 2 {
			total += e.t - since
		}
		active += e.d
		since = e.t
	}
	return float64(total) / 1e6
}

func sortedIntervalTPs(m map[topicPartition][]interval) []topicPartition {
	out := make([]topicPartition, 0, len(m))
	for tp := range m {
		out = append(out, tp)
	}
	slices.SortFunc(out, compareTP)
	return out
}
