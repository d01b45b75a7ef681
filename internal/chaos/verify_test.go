package chaos

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeRun writes a run directory by hand, with times in seconds from the
// start of the fault phase.
type fakeRun struct {
	t      *testing.T
	dir    string
	base   int64
	info   RunInfo
	faults []FaultRecord
	incs   []Incarnation
	logs   map[string][]Record
	acked  []string
	offs   []OffsetRecord
	owners OwnersCheck
}

const fakeTopic = "chaos.main"

func newFakeRun(t *testing.T) *fakeRun {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	return &fakeRun{
		t: t, dir: t.TempDir(), base: base, logs: map[string][]Record{},
		info: RunInfo{Seed: 1, Members: 2, Streams: 2, CommitInterval: time.Second, CommitSlack: time.Second,
			SessionTimeout: 6 * time.Second, Group: "g", MainTopic: fakeTopic, Start: base - int64(time.Minute),
			FaultsStart: base, End: base + int64(time.Hour), Settled: true},
		owners: OwnersCheck{Converged: true},
	}
}

func (r *fakeRun) at(sec float64) int64 { return r.base + int64(sec*1e9) }

// member adds an incarnation that lived from start to end (seconds).
func (r *fakeRun) member(slot, inc int, start, end float64, ending string, exitCode int) string {
	key := fmt.Sprintf("m%d.%d", slot, inc)
	r.incs = append(r.incs, Incarnation{Slot: slot, Inc: inc, Log: "members/" + key + ".jsonl",
		Start: r.at(start), End: r.at(end), Ending: ending, ExitCode: exitCode})
	r.logs[key] = append(r.logs[key], Record{Kind: RecStart, TS: r.at(start), Slot: slot, Inc: inc, ConsumerID: key})
	if ending == "leave" || ending == "final" {
		r.logs[key] = append(r.logs[key], Record{Kind: RecExit, TS: r.at(end), Clean: true})
	}
	return key
}

func (r *fakeRun) assign(key string, sec float64, parts ...int32) {
	r.logs[key] = append(r.logs[key], Record{Kind: RecAssign, TS: r.at(sec), Parts: map[string][]int32{fakeTopic: parts}})
}

func (r *fakeRun) release(key string, sec float64, lost bool, parts ...int32) {
	r.logs[key] = append(r.logs[key], Record{Kind: RecRelease, TS: r.at(sec), Lost: lost, Parts: map[string][]int32{fakeTopic: parts}})
}

// deliver logs offsets from..to of partition p by key, one every step
// seconds from sec on.
func (r *fakeRun) deliver(key string, p int32, from, to int64, sec, step float64) {
	for o := from; o <= to; o++ {
		r.logs[key] = append(r.logs[key], Record{Kind: RecDelivery, TS: r.at(sec), Topic: fakeTopic, Partition: p, Offset: o, Seq: 1000*int64(p) + o})
		sec += step
	}
}

func (r *fakeRun) ack(p int32, from, to int64) {
	for o := from; o <= to; o++ {
		r.acked = append(r.acked, fmt.Sprintf(`{"t":%q,"p":%d,"o":%d,"s":%d}`, fakeTopic, p, o, 1000*int64(p)+o))
	}
}

func (r *fakeRun) fault(id int, kind FaultKind, slot, inc int, start, end float64) {
	r.faults = append(r.faults, FaultRecord{PlannedFault: PlannedFault{ID: id, Kind: kind, Member: slot},
		Inc: inc, Start: r.at(start), End: r.at(end)})
}

func (r *fakeRun) verify() *Result {
	r.t.Helper()
	must := func(err error) {
		r.t.Helper()
		if err != nil {
			r.t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(r.dir, "members"), 0o755))
	must(writeJSON(filepath.Join(r.dir, runFile), r.info))
	must(writeJSON(filepath.Join(r.dir, ownersFile), r.owners))
	must(writeJSONLines(filepath.Join(r.dir, faultsFile), r.faults))
	must(writeJSONLines(filepath.Join(r.dir, incarnationsFile), r.incs))
	must(writeJSONLines(filepath.Join(r.dir, offsetsFile), r.offs))
	must(os.WriteFile(filepath.Join(r.dir, ackedFile), []byte(strings.Join(r.acked, "\n")+"\n"), 0o644))
	for key, recs := range r.logs {
		must(writeJSONLines(filepath.Join(r.dir, "members", key+".jsonl"), recs))
	}
	res, err := Verify(r.dir)
	must(err)
	var b strings.Builder
	res.Report(&b)
	r.t.Logf("\n%s", b.String())
	return res
}

func TestVerifyOrderlyHandOverPasses(t *testing.T) {
	r := newFakeRun(t)
	a := r.member(0, 1, 0, 30, "leave", 0)
	b := r.member(1, 1, 0, 60, "final", 0)
	r.assign(a, 0.5, 0)
	r.assign(b, 0.5)
	r.deliver(a, 0, 0, 9, 1, 1) // t=1..10
	r.release(a, 11, false, 0)
	r.release(b, 11, false)
	r.assign(b, 12, 0)
	r.deliver(b, 0, 10, 19, 13, 1)
	r.release(b, 59, false, 0)
	r.ack(0, 0, 19)
	res := r.verify()
	if !res.Passed() {
		t.Fatalf("an orderly hand-over must pass: %v", res.Failures())
	}
	if res.Lost != 0 || res.Duplicates != 0 || res.Distinct != 20 || res.Acked != 20 {
		t.Fatalf("lost %d, duplicates %d, distinct %d, acked %d", res.Lost, res.Duplicates, res.Distinct, res.Acked)
	}
}

func TestVerifyFindsLossAndExplainsKill(t *testing.T) {
	r := newFakeRun(t)
	a := r.member(0, 1, 0, 10, "kill", -1)
	b := r.member(1, 1, 0, 60, "final", 0)
	r.assign(a, 0.5, 0)
	r.deliver(a, 0, 0, 9, 1, 1) // offsets 8 and 9 at t=9 and t=10
	r.fault(1, MemberKill, 0, 1, 10, 12)
	r.assign(b, 17, 0)
	r.deliver(b, 0, 8, 12, 18, 0.5) // resumes at the last commit (8); 13 never comes
	r.release(b, 59, false, 0)
	r.ack(0, 0, 13)
	res := r.verify()
	if res.Lost != 1 || res.LostSample[0] != fakeTopic+"-0@13" {
		t.Fatalf("lost %d %v, want offset 13 lost", res.Lost, res.LostSample)
	}
	if res.Duplicates != 2 || res.Explained["kill -9: uncommitted tail"] != 2 {
		t.Fatalf("duplicates %d, explained %v, unexplained %v", res.Duplicates, res.Explained, res.Unexplained)
	}
	if res.Double.TotalMs != 0 || res.Double.Messages != 0 {
		t.Fatalf("no double ownership expected: %+v", res.Double)
	}
	if res.Passed() {
		t.Fatal("a lost message must fail the run")
	}
}

func TestVerifyKillDuplicatesOlderThanCommitIntervalAreUnexplained(t *testing.T) {
	r := newFakeRun(t)
	a := r.member(0, 1, 0, 10, "kill", -1)
	b := r.member(1, 1, 0, 60, "final", 0)
	r.assign(a, 0.5, 0)
	r.deliver(a, 0, 0, 9, 1, 1)
	r.fault(1, MemberKill, 0, 1, 10, 12)
	r.assign(b, 17, 0)
	r.deliver(b, 0, 3, 9, 18, 0.5) // offset 3 was delivered at t=4, 6 s before the kill
	r.release(b, 59, false, 0)
	r.ack(0, 0, 9)
	res := r.verify()
	// Offsets 7 to 9 (t=8..10) lie in the last commit interval plus slack
	// (2 s) before the kill at t=10; 3..6 do not.
	if got := res.Explained["kill -9: uncommitted tail"]; got != 3 {
		t.Fatalf("explained %v", res.Explained)
	}
	if res.UnexplainedCount() != 4 || res.Unexplained[0].Fault != 1 || res.Unexplained[0].First != "m0.1" || res.Unexplained[0].Again != "m1.1" {
		t.Fatalf("unexplained %+v", res.Unexplained)
	}
	if !res.Passed() {
		t.Fatalf("unexplained duplicates alone do not fail the run: %v", res.Failures())
	}
}

// A member frozen past its session resumes and delivers for a while before
// it learns that its partition was taken over: double ownership.
func TestVerifyFindsDoubleOwnershipAfterSIGSTOP(t *testing.T) {
	r := newFakeRun(t)
	a := r.member(0, 1, 0, 60, "final", 0)
	b := r.member(1, 1, 0, 60, "final", 0)
	r.assign(a, 0.5, 0)
	r.deliver(a, 0, 0, 4, 1, 1) // t=1..5
	r.fault(1, MemberStop, 0, 1, 5.5, 14.5)
	r.assign(b, 12, 0)
	r.deliver(b, 0, 3, 9, 12.5, 0.5) // t=12.5..15.5
	r.deliver(a, 0, 5, 6, 14.8, 0.2) // after SIGCONT, before it is told
	r.release(a, 15.2, true, 0)      // lost
	r.release(b, 59, false, 0)
	r.ack(0, 0, 9)
	res := r.verify()
	// a's running tenure after the freeze is [14.5, 15.0]; b's is
	// [12.5, 15.5]: 500 ms of overlap, without the frozen part.
	if ms := res.Double.TotalMs; ms < 499 || ms > 501 {
		t.Fatalf("double ownership %.1f ms, want 500", ms)
	}
	if res.Double.Messages == 0 || len(res.Double.Instances) != 1 {
		t.Fatalf("double ownership %+v", res.Double)
	}
	inst := res.Double.Instances[0]
	if inst.Earlier != "m0.1" || inst.Later != "m1.1" || inst.Fault != 1 {
		t.Fatalf("instance %+v", inst)
	}
	if got := res.Explained["session lost (member-stop): uncommitted tail"]; got != 2 {
		t.Fatalf("explained %v (offsets 3 and 4 were delivered by a within 2 s of its freeze)", res.Explained)
	}
	if res.Passed() {
		t.Fatal("double ownership must fail the run")
	}
	// The listener figure counts b's ownership from 12 s against a's
	// after SIGCONT, up to a's lost release: 700 ms.
	if ms := res.Listener.TotalMs; ms < 699 || ms > 701 {
		t.Fatalf("listener overlap %.1f ms, want 700", ms)
	}
}

// A frozen member that delivers nothing after SIGCONT is not a double owner,
// however long its listener period lasts.
func TestVerifyFrozenMemberThatStaysQuietPasses(t *testing.T) {
	r := newFakeRun(t)
	a := r.member(0, 1, 0, 60, "final", 0)
	b := r.member(1, 1, 0, 60, "final", 0)
	r.assign(a, 0.5, 0)
	r.deliver(a, 0, 0, 4, 1, 1)
	r.fault(1, MemberStop, 0, 1, 5.5, 14.5)
	r.assign(b, 12, 0)
	r.deliver(b, 0, 3, 9, 12.5, 0.5)
	r.release(a, 16, true, 0)
	r.release(b, 59, false, 0)
	r.ack(0, 0, 9)
	res := r.verify()
	if !res.Passed() {
		t.Fatalf("failures: %v", res.Failures())
	}
	if res.Listener.TotalMs == 0 {
		t.Fatal("the listener overlap after SIGCONT should be reported")
	}
}

// A stale commit moves the group's offset back after an orderly hand-over:
// the next owner delivers again what was consumed already.
func TestVerifyNamesOffsetRegressions(t *testing.T) {
	r := newFakeRun(t)
	a := r.member(0, 1, 0, 60, "final", 0)
	b := r.member(1, 1, 0, 60, "final", 0)
	r.assign(a, 0.5, 0)
	r.deliver(a, 0, 0, 9, 1, 1) // t=1..10
	r.release(a, 11, false, 0)
	commit := func(sec float64, off int64, version int32) {
		r.offs = append(r.offs, OffsetRecord{Mtime: r.at(sec), Topic: fakeTopic, Offset: off, Version: version})
	}
	commit(10.9, 10, 9)
	commit(11.5, 5, 10) // someone's stale commit
	r.assign(b, 12, 0)
	r.deliver(b, 0, 5, 14, 13, 0.1)
	r.release(b, 59, false, 0)
	r.ack(0, 0, 14)
	res := r.verify()
	if len(res.Regressions) != 1 || res.Regressions[0].From != 10 || res.Regressions[0].To != 5 {
		t.Fatalf("regressions %+v", res.Regressions)
	}
	// Offset 9 was in a's hands at the release; 5..8 come back because of
	// the regression.
	if res.Explained["in hand at an orderly release"] != 1 || res.UnexplainedCount() != 4 ||
		res.Unexplained[0].Reason != "redelivered after the committed offset went back" {
		t.Fatalf("explained %v, unexplained %+v", res.Explained, res.Unexplained)
	}
}

func TestVerifyProcessFailures(t *testing.T) {
	r := newFakeRun(t)
	a := r.member(0, 1, 0, 60, "final", 0)
	b := r.member(1, 1, 0, 20, "", 2) // died on its own
	r.incs[1].Panic = true
	r.logs[a] = append(r.logs[a], Record{Kind: RecExit, TS: r.at(60), Clean: true, Goroutines: 7, Leaked: "found unexpected goroutines:\n[Goroutine 12 ...]"})
	r.assign(a, 1)
	r.assign(b, 1)
	r.owners = OwnersCheck{Converged: false, Mismatches: []string{"chaos.main-0 has no owner"}}
	res := r.verify()
	if len(res.Panics) != 1 || len(res.Unclean) != 1 || len(res.Leaks) != 1 || res.Owners.Converged {
		t.Fatalf("panics %v, unclean %v, leaks %v, owners %+v", res.Panics, res.Unclean, res.Leaks, res.Owners)
	}
	if len(res.Failures()) != 4 {
		t.Fatalf("failures %v", res.Failures())
	}
}

func TestCoveredTwice(t *testing.T) {
	iv := func(inc int32, a, b float64) interval {
		return interval{inc: inc, a: int64(a * 1e6), b: int64(b * 1e6)}
	}
	for _, tc := range []struct {
		ivs  []interval
		want float64
	}{
		{[]interval{iv(0, 0, 10), iv(1, 10, 20)}, 0}, // touching
		{[]interval{iv(0, 0, 10), iv(1, 5, 20)}, 5},
		{[]interval{iv(0, 0, 30), iv(1, 5, 10), iv(2, 8, 20)}, 15}, // 5..20
		{[]interval{iv(0, 5, 5), iv(1, 0, 10)}, 0},                 // an instant
	} {
		if got := coveredTwice(tc.ivs); got != tc.want {
			t.Errorf("coveredTwice(%v) = %v, want %v", tc.ivs, got, tc.want)
		}
	}
}

func TestRunningCutsFrozenWindows(t *testing.T) {
	il := &incLog{frozen: [][2]int64{{10, 20}, {30, 40}}}
	got := il.running(0, 5, 35)
	want := []interval{{0, 5, 10, 5}, {0, 20, 30, 5}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("running = %v, want %v", got, want)
	}
	if got := il.running(0, 12, 18); len(got) != 0 {
		t.Fatalf("an interval inside a freeze runs for %v", got)
	}
}

func TestLogWriterRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.jsonl")
	w, err := createLog(path)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(Record{Kind: RecAssign, TS: 1, Parts: map[string][]int32{"t": {0, 2}}})
	w.Delivery(2, "t.x-1", 3, 44, 55)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var got []string
	_, err = ReadLog(path, func(r *Record) error {
		data, _ := json.Marshal(r)
		got = append(got, string(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"k":"assign","ts":1,"parts":{"t":[0,2]}}`,
		`{"k":"d","ts":2,"t":"t.x-1","p":3,"o":44,"s":55}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("read back\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestVerifyTailFromObservedCommits: with commits observed, a duplicate is
// in the uncommitted tail exactly when its offset is at or beyond the last
// offset committed before another member took the partition over, however
// long before the fault it was delivered.
func TestVerifyTailFromObservedCommits(t *testing.T) {
	v := &verifier{
		commits:   map[topicPartition][]OffsetRecord{},
		takeovers: map[takeoverKey]int64{},
		dels:      map[topicPartition][]delivery{},
	}
	tp := topicPartition{"t", 0}
	ms := int64(time.Millisecond)
	v.commits[tp] = []OffsetRecord{{Mtime: 10 * ms, Offset: 5, Version: 1}, {Mtime: 20 * ms, Offset: 8, Version: 2}, {Mtime: 30 * ms, Offset: 9, Version: 3}, {Mtime: 40 * ms, Offset: 12, Version: 4}}
	v.dels[tp] = []delivery{{off: 5, ts: 11 * ms, inc: 0}, {off: 8, ts: 30*ms + ms/2, inc: 1}, {off: 12, ts: 41 * ms, inc: 1}}
	if got := v.takeover(tp, 0, 0, 100*ms); got != 30*ms+ms/2 {
		t.Fatalf("takeover at %d, want %d (the other member's first delivery)", got, 30*ms+ms/2)
	}
	// The commit stamped in the takeover's millisecond may have come after it.
	off, ok := v.lastCommit(tp, v.takeover(tp, 0, 0, 100*ms))
	if !ok || off != 8 {
		t.Fatalf("last commit before the takeover: %d %v, want 8", off, ok)
	}
	if _, ok := v.lastCommit(tp, 5); ok {
		t.Fatal("no commit was observed before t=5")
	}
}
