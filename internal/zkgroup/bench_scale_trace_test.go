package zkgroup

import (
	"context"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zkconsumer/zkconsumer/zkutil"
)

// This file breaks BenchmarkRebalanceScale's settle time down by phase
// (BENCHMARKS.md, "Rebalance at scale"). Every ZooKeeper call of
// a member and its handler's Revoke and Assign are recorded with their start
// and end, and after each op the trace of every remaining member is cut
// into the steps of its rebalance:
//
//   - react: from the leaver's registration delete (graceful) or session
//     close (crash) to the member's first ZooKeeper call: the watch
//     notification reaching the member's session, its loop waking up;
//   - prepare: from there to the listing of the group (register check,
//     re-arming the membership watch, the handler's Revoke);
//   - read: the listing, the new registrations and the topic;
//   - compute: from the end of the topic read to the next call (the
//     assignor);
//   - handover: releases, the wait for previous owners, claims, until the
//     handler's Assign;
//
// and within all of them, the time with a ZooKeeper call in flight (zk)
// against the time without (local: CPU and Go scheduling, or waiting for
// previous owners, counted apart as wait).
//
// The CPU time of the test process (getrusage) and of the ZooKeeper
// servers (/proc/<pid>/stat of the pids in ZKCONSUMER_SCALE_ZKPIDS) is
// reported per op and per remaining member. ZKCONSUMER_SCALE_CPUPROFILE
// writes a CPU profile of the timed part only.

// span is one recorded call.
type span struct {
	kind       string // "get", "getw", "children", "exists", "multi", "delete", "create", "revoke", "assign"
	path       string
	start, end time.Time
}

// opTrace records a member's calls while on.
type opTrace struct {
	mu    sync.Mutex
	on    bool
	spans []span
}

func (t *opTrace) begin() {
	t.mu.Lock()
	t.on, t.spans = true, t.spans[:0]
	t.mu.Unlock()
}

func (t *opTrace) end() []span {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.on = false
	return slices.Clone(t.spans)
}

func (t *opTrace) add(kind, path string, start time.Time) {
	if t == nil {
		return
	}
	end := time.Now()
	t.mu.Lock()
	if t.on {
		t.spans = append(t.spans, span{kind, path, start, end})
	}
	t.mu.Unlock()
}

// tracingHandler records the handler's calls in a trace.
type tracingHandler struct {
	signalingRecorder
	t *opTrace
}

func (h tracingHandler) Revoke(ctx context.Context, gen *Generation, lost bool) error {
	defer h.t.add("revoke", "", time.Now())
	return h.signalingRecorder.Revoke(ctx, gen, lost)
}

func (h tracingHandler) Assign(ctx context.Context, gen *Generation) error {
	h.t.add("assign", "", time.Now()) // the moment the member is done
	return h.signalingRecorder.Assign(ctx, gen)
}

// phases sums the phases of the members' rebalances over the ops.
type phases struct {
	members                                           int
	react, prepare, read, compute, handover, wait, zk time.Duration
	spans                                             int
	zkTotal                                           time.Duration    // sum of call durations
	last                                              [6]time.Duration // react..handover+wait of the last member, summed over ops
	leaverClose                                       time.Duration
	doneP50, doneMax                                  time.Duration
	ops                                               int
	cpuSelf, cpuZK                                    time.Duration
	noticed                                           time.Duration // from the last Assign to waitShares returning
	idleSelf, idleZK                                  time.Duration // CPU per second, idle
}

// idle measures the CPU used per second while wait runs with the group
// idle.
func (p *phases) idle(wait func()) {
	c, z, t := cpuSelf(), cpuZK(), time.Now()
	wait()
	per := float64(time.Second) / float64(time.Since(t))
	p.idleSelf = time.Duration(float64(cpuSelf()-c) * per)
	p.idleZK = time.Duration(float64(cpuZK()-z) * per)
}

// cut adds the traces of one op. from is when the leave became visible
// (the leaver's registration delete, or its session close), t0 when the op
// started, end when waitShares returned.
func (p *phases) cut(traces [][]span, group string, t0, from, end time.Time) {
	ids := zkutil.ConsumerIDsPath(group)
	var dones []time.Duration
	var lastDone time.Time
	var lastPh [6]time.Duration
	for _, tr := range traces {
		slices.SortFunc(tr, func(a, b span) int { return a.start.Compare(b.start) })
		ai := slices.IndexFunc(tr, func(s span) bool { return s.kind == "assign" })
		if ai < 1 {
			continue // no generation started in this op
		}
		done := tr[ai].start
		first := tr[0].start
		// The listing of the group by readGroup: the children call on
		// /ids without a watch, or the one with the watch when readGroup
		// uses its listing.
		li := slices.IndexFunc(tr[:ai], func(s span) bool { return s.kind == "children" && s.path == ids })
		if li < 0 {
			// Served from the listing that came with the watch.
			li = max(0, slices.IndexFunc(tr[:ai], func(s span) bool { return s.kind == "childrenw" && s.path == ids }))
		}
		// The topic read ends the group read.
		ti := li
		for i := li; i < ai; i++ {
			if strings.HasPrefix(tr[i].path, "/brokers/topics/") {
				ti = i
				break
			}
		}
		readEnd := tr[ti].end
		next := done
		if ti+1 < ai {
			next = tr[ti+1].start
		}
		var ph [6]time.Duration
		ph[0] = first.Sub(from)
		ph[1] = tr[li].start.Sub(first)
		ph[2] = readEnd.Sub(tr[li].start)
		ph[3] = next.Sub(readEnd)
		// handover: zk calls from next to done; gaps after a watched
		// read of an owner node are the wait for previous owners.
		var wait, zk time.Duration
		cover := first
		for i := 0; i < ai; i++ {
			s := tr[i]
			if s.kind == "revoke" {
				continue
			}
			p.spans++
			p.zkTotal += s.end.Sub(s.start)
			st := s.start
			if st.Before(cover) {
				st = cover
			}
			if s.end.After(st) {
				zk += s.end.Sub(st)
				cover = s.end
			}
			if s.kind == "getw" && strings.Contains(s.path, "/owners/") && s.start.After(readEnd) {
				nx := done
				if i+1 < ai {
					nx = tr[i+1].start
				}
				if i+1 >= ai || !(tr[i+1].kind == "getw" && strings.Contains(tr[i+1].path, "/owners/")) {
					if g := nx.Sub(cover); g > 0 {
						wait += g
					}
				}
			}
		}
		ph[4] = done.Sub(next) - wait
		ph[5] = wait
		p.react += ph[0]
		p.prepare += ph[1]
		p.read += ph[2]
		p.compute += ph[3]
		p.handover += ph[4]
		p.wait += wait
		p.zk += zk
		p.members++
		dones = append(dones, done.Sub(t0))
		if done.After(lastDone) {
			lastDone, lastPh = done, ph
		}
	}
	if len(dones) == 0 {
		return
	}
	slices.Sort(dones)
	p.ops++
	p.leaverClose += from.Sub(t0)
	p.doneP50 += dones[len(dones)/2]
	p.doneMax += dones[len(dones)-1]
	p.noticed += end.Sub(lastDone)
	for i := range lastPh {
		p.last[i] += lastPh[i]
	}
}

func (p *phases) report(b *testing.B) {
	if p.ops == 0 || p.members == 0 {
		return
	}
	per := func(d time.Duration) float64 { return ms(d) / float64(p.members) }
	op := func(d time.Duration) float64 { return ms(d) / float64(p.ops) }
	b.ReportMetric(op(p.leaverClose), "leaver-close-ms")
	b.ReportMetric(op(p.doneP50), "done-p50-ms")
	b.ReportMetric(op(p.doneMax), "done-max-ms")
	b.ReportMetric(op(p.noticed), "noticed-ms")
	b.ReportMetric(per(p.react), "react-ms")
	b.ReportMetric(per(p.prepare), "prepare-ms")
	b.ReportMetric(per(p.read), "read-ms")
	b.ReportMetric(per(p.compute), "compute-ms")
	b.ReportMetric(per(p.handover), "handover-ms")
	b.ReportMetric(per(p.wait), "wait-ms")
	b.ReportMetric(per(p.zk), "zk-busy-ms")
	b.ReportMetric(ms(p.zkTotal)/float64(max(p.spans, 1)), "zk-call-ms")
	for i, name := range []string{"react", "prepare", "read", "compute", "handover", "wait"} {
		b.ReportMetric(op(p.last[i]), "last-"+name+"-ms")
	}
	b.ReportMetric(ms(p.idleSelf), "idle-cpu-self-ms/s")
	b.ReportMetric(ms(p.idleZK), "idle-cpu-zk-ms/s")
	b.ReportMetric(op(p.cpuSelf), "cpu-self-ms")
	b.ReportMetric(op(p.cpuZK), "cpu-zk-ms")
	b.ReportMetric(ms(p.cpuSelf)/float64(p.members), "cpu-self-ms/member")
	b.ReportMetric(ms(p.cpuZK)/float64(p.members), "cpu-zk-ms/member")
}

// cpuSelf returns the CPU time of this process so far.
func cpuSelf() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuZK returns the CPU time so far of the processes in
// ZKCONSUMER_SCALE_ZKPIDS (comma-separated), 0 if none.
func cpuZK() time.Duration {
	var total time.Duration
	for f := range strings.SplitSeq(os.Getenv("ZKCONSUMER_SCALE_ZKPIDS"), ",") {
		if f == "" {
			continue
		}
		data, err := os.ReadFile("/proc/" + strings.TrimSpace(f) + "/stat")
		if err != nil {
			continue
		}
		s := string(data)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		// fields[11], fields[12]: utime, stime (fields 14 and 15 of stat), in ticks of 10ms.
		u, _ := strconv.ParseInt(fields[11], 10, 64)
		st, _ := strconv.ParseInt(fields[12], 10, 64)
		total += time.Duration(u+st) * 10 * time.Millisecond
	}
	return total
}

// startProfile writes a CPU profile of the sub-benchmark, if asked.
func startProfile(b *testing.B) {
	path := os.Getenv("ZKCONSUMER_SCALE_CPUPROFILE")
	if path == "" {
		return
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { pprof.StopCPUProfile(); _ = f.Close() })
}

// deregisteredAt returns the start of the leaver's delete of its
// registration, or zero.
func deregisteredAt(tr []span, group, id string) time.Time {
	path := zkutil.ConsumerIDPath(group, id)
	for _, s := range slices.Backward(tr) {
		if s.kind == "delete" && s.path == path {
			return s.start
		}
	}
	return time.Time{}
}
