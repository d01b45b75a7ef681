package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// fakeRun writes a run directory by hand, with times in seconds from the
// start of the fault phase.
type fakeRun struct {
	t       *testing.T
	dir     string
	base    int64
	info    RunInfo
	faults  []FaultRecord
	incs    []Incarnation
	logs    map[string][]Record
	acked   []string
	commits []CommitRecord
	obs     *CommitObservation // nil: observed, without problems
	owners  OwnersCheck
}

const fakeTopic = "chaos.main"

func newFakeRun(t *testing.T) *fakeRun {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	return &fakeRun{
		t: t, dir: t.TempDir(), base: base, logs: map[string][]Record{},
		info: RunInfo{Seed: 1, Topology: TopologyEnsemble, Members: 2, Streams: 2, CommitInterval: time.Second,
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

func (r *fakeRun) fault(id int, kind FaultKind, slot, inc int, start, end float64) *FaultRecord {
	f := FaultRecord{PlannedFault: PlannedFault{ID: id, Kind: kind, Member: slot},
		Inc: inc, Start: r.at(start), End: r.at(end)}
	if kind == MemberKill {
		f.KillAt = f.Start
	}
	r.faults = append(r.faults, f)
	return &r.faults[len(r.faults)-1]
}

// commit records a commit of offset off of partition p that the store
// applied at sec; order follows the calls.
func (r *fakeRun) commit(p int32, off int64, sec float64) *CommitRecord {
	r.commits = append(r.commits, CommitRecord{Store: storeZooKeeper, Order: int64(len(r.commits) + 1),
		Time: r.at(sec), Topic: fakeTopic, Partition: p, Offset: off})
	return &r.commits[len(r.commits)-1]
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
	obs := CommitObservation{Store: storeZooKeeper, Commits: len(r.commits)}
	if r.obs != nil {
		obs = *r.obs
	}
	must(saveCommits(r.dir, r.commits, obs))
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
	r.commit(0, 8, 9.5) // a's last auto-commit
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

// A duplicate below the offset committed before the new owner started is
// not in the killed member's uncommitted tail: unexplained, and the run
// fails.
func TestVerifyKillDuplicatesBelowTheCommitAreUnexplained(t *testing.T) {
	r := newFakeRun(t)
	a := r.member(0, 1, 0, 10, "kill", -1)
	b := r.member(1, 1, 0, 60, "final", 0)
	r.assign(a, 0.5, 0)
	r.deliver(a, 0, 0, 9, 1, 1)
	r.commit(0, 7, 8.5)
	r.fault(1, MemberKill, 0, 1, 10, 12)
	r.assign(b, 17, 0)
	r.deliver(b, 0, 3, 9, 18, 0.5) // starts at 3, below the committed 7
	r.release(b, 59, false, 0)
	r.ack(0, 0, 9)
	res := r.verify()
	if got := res.Explained["kill -9: uncommitted tail"]; got != 3 {
		t.Fatalf("explained %v, want 7..9 in the tail", res.Explained)
	}
	if res.UnexplainedCount() != 4 || res.Unexplained[0].Fault != 1 || res.Unexplained[0].First != "m0.1" || res.Unexplained[0].Again != "m1.1" ||
		res.Unexplained[0].Reason != "redelivered below the offset committed before the new owner started" {
		t.Fatalf("unexplained %+v", res.Unexplained)
	}
	if res.Passed() || !slices.Contains(res.Failures(), "4 unexplained duplicates") {
		t.Fatalf("unexplained duplicates must fail the run: %v", res.Failures())
	}
}

// After an orderly release, only the message in the member's hands may
// come back; anything else it consumed should have been committed.
func TestVerifyUnexplainedDuplicateAfterOrderlyReleaseFails(t *testing.T) {
	r := newFakeRun(t)
	a := r.member(0, 1, 0, 30, "leave", 0)
	b := r.member(1, 1, 0, 60, "final", 0)
	r.assign(a, 0.5, 0)
	r.deliver(a, 0, 0, 9, 1, 1) // t=1..10
	r.commit(0, 5, 6.5)         // the release's commit never came
	r.release(a, 11, false, 0)
	r.assign(b, 12, 0)
	r.deliver(b, 0, 5, 14, 13, 0.1)
	r.release(b, 59, false, 0)
	r.ack(0, 0, 14)
	res := r.verify()
	if res.Explained["in hand at an orderly release"] != 1 || res.UnexplainedCount() != 4 ||
		res.Unexplained[0].Reason != "consumed before an orderly release but not committed" {
		t.Fatalf("explained %v, unexplained %+v", res.Explained, res.Unexplained)
	}
	if res.Passed() {
		t.Fatal("an unexplained duplicate must fail the run")
	}
}

// The same release while a fault kept the member from its offset store
// explains the duplicates: the commit could not be made.
func TestVerifyOrderlyReleaseWhileStoreCutIsExplained(t *testing.T) {
	r := newFakeRun(t)
	a := r.member(0, 1, 0, 30, "leave", 0)
	b := r.member(1, 1, 0, 60, "final", 0)
	r.assign(a, 0.5, 0)
	r.deliver(a, 0, 0, 9, 1, 1)
	r.commit(0, 5, 6.5)
	f := r.fault(1, MemberBrokerCutShort, 0, 1, 7, 9)
	f.StoreCut = []string{"m0.1"}
	r.release(a, 11, false, 0)
	r.assign(b, 12, 0)
	r.deliver(b, 0, 5, 14, 13, 0.1)
	r.release(b, 59, false, 0)
	r.ack(0, 0, 14)
	res := r.verify()
	if res.UnexplainedCount() != 0 || res.Explained["orderly release while its offset store was out of reach (member-broker-cut-short): uncommitted tail"] != 4 {
		t.Fatalf("explained %v, unexplained %+v", res.Explained, res.Unexplained)
	}
	if !res.Passed() {
		t.Fatalf("failures %v", res.Failures())
	}
}

// Without an observation of the committed offsets, the run fails: no
// duplicate can be checked against the commits.
func TestVerifyWithoutObservationFails(t *testing.T) {
	r := newFakeRun(t)
	a := r.member(0, 1, 0, 60, "final", 0)
	r.assign(a, 0.5, 0)
	r.deliver(a, 0, 0, 9, 1, 1)
	r.release(a, 59, false, 0)
	r.ack(0, 0, 9)
	r.obs = &CommitObservation{Store: storeZooKeeper, Problems: []string{"chaos.main-0: committed offset 10 at the end, but no commit of it observed"}}
	res := r.verify()
	if res.Passed() {
		t.Fatal("a problem of the observation must fail the run")
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
	if got := res.Explained["ownership lost (session or membership): uncommitted tail"]; got != 2 {
		t.Fatalf("explained %v (offsets 3 and 4 were never committed)", res.Explained)
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
// the next owner delivers again what was consumed already. The regression
// fails the run, and so do the duplicates it causes.
func TestVerifyOffsetRegressionFails(t *testing.T) {
	r := newFakeRun(t)
	a := r.member(0, 1, 0, 60, "final", 0)
	b := r.member(1, 1, 0, 60, "final", 0)
	r.assign(a, 0.5, 0)
	r.deliver(a, 0, 0, 9, 1, 1) // t=1..10
	r.release(a, 11, false, 0)
	r.commit(0, 9, 10.9)
	stale := r.commit(0, 5, 11.5) // someone's stale commit
	stale.Session, stale.Consumer = 0x1234, "m0.1"
	r.assign(b, 12, 0)
	r.deliver(b, 0, 5, 14, 13, 0.1)
	r.release(b, 59, false, 0)
	r.ack(0, 0, 14)
	res := r.verify()
	if len(res.Regressions) != 1 || res.Regressions[0].From != 9 || res.Regressions[0].To != 5 || res.Regressions[0].By != "m0.1 (session 0x1234)" {
		t.Fatalf("regressions %+v", res.Regressions)
	}
	// Offset 9 was in a's hands at the release; 5..8 come back because of
	// the regression.
	if res.Explained["in hand at an orderly release"] != 1 || res.UnexplainedCount() != 4 ||
		res.Unexplained[0].Reason != "redelivered after the committed offset went back" {
		t.Fatalf("explained %v, unexplained %+v", res.Explained, res.Unexplained)
	}
	if !slices.Contains(res.Failures(), "1 committed-offset regressions") {
		t.Fatalf("a regression must fail the run: %v", res.Failures())
	}
}

// A regression fails the run even when it causes no duplicate (nobody read
// the partition again before it was committed forward).
func TestVerifyRegressionWithoutDuplicatesFails(t *testing.T) {
	r := newFakeRun(t)
	a := r.member(0, 1, 0, 60, "final", 0)
	r.assign(a, 0.5, 0)
	r.deliver(a, 0, 0, 9, 1, 1)
	r.commit(0, 6, 7.5)
	r.commit(0, 4, 8.5)
	r.commit(0, 10, 10.5)
	r.release(a, 59, false, 0)
	r.ack(0, 0, 9)
	res := r.verify()
	if len(res.Regressions) != 1 || res.Duplicates != 0 || res.Passed() {
		t.Fatalf("regressions %+v, duplicates %d, failures %v", res.Regressions, res.Duplicates, res.Failures())
	}
}

// A commit to ZooKeeper by a session that did not hold the owner node
// fails the run.
func TestVerifyNonOwnerWriteFails(t *testing.T) {
	r := newFakeRun(t)
	a := r.member(0, 1, 0, 60, "final", 0)
	r.assign(a, 0.5, 0)
	r.deliver(a, 0, 0, 9, 1, 1)
	c := r.commit(0, 10, 10.5)
	c.NotOwner = "no owner node"
	r.release(a, 59, false, 0)
	r.ack(0, 0, 9)
	res := r.verify()
	if len(res.NonOwnerWrites) != 1 || res.Passed() {
		t.Fatalf("non-owner writes %+v, failures %v", res.NonOwnerWrites, res.Failures())
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

// TestVerifyCommitsBeforeTakeover: the commit that counts for a
// redelivery is the last one applied before the new owner's first delivery
// of its period; one stamped in that very millisecond may have come after
// it and does not count.
func TestVerifyCommitsBeforeTakeover(t *testing.T) {
	v := &verifier{commits: map[topicPartition][]CommitRecord{}}
	tp := topicPartition{"t", 0}
	ms := int64(time.Millisecond)
	v.commits[tp] = []CommitRecord{{Order: 1, Time: 10 * ms, Offset: 5}, {Order: 2, Time: 20 * ms, Offset: 8},
		{Order: 3, Time: 30 * ms, Offset: 9}, {Order: 4, Time: 40 * ms, Offset: 12}}
	off, ok := v.lastCommit(tp, 30*ms+ms/2)
	if !ok || off != 8 {
		t.Fatalf("last commit before 30.5 ms: %d %v, want 8", off, ok)
	}
	if _, ok := v.lastCommit(tp, 5*ms); ok {
		t.Fatal("no commit was applied before 5 ms")
	}
	if off, ok := v.highestCommit(tp, 41*ms); !ok || off != 12 {
		t.Fatalf("highest commit before 41 ms: %d %v", off, ok)
	}
}

// TestVerifyReplacedStaticMemberMayStopOnItsOwn: the static member a
// static-replace fault replaced learns it (its join or heartbeat is fenced)
// and stops before the driver ends it; that is what it must do, not an
// unclean exit. Stopping on its own for another reason, or with a fenced
// error that no fault explains, still is.
func TestVerifyReplacedStaticMemberMayStopOnItsOwn(t *testing.T) {
	r := newFakeRun(t)
	old := r.member(0, 1, 0, 21, "", 1)
	r.member(0, 2, 20, 60, "final", 0)
	loner := r.member(1, 1, 0, 30, "", 1)
	stranger := r.member(2, 1, 0, 30, "", 1)
	r.fault(1, StaticReplace, 0, 1, 20, 22)
	fenced := Record{Kind: RecExit, TS: r.at(21), Err: "join group: FENCED_INSTANCE_ID", Replaced: true}
	r.logs[old] = append(r.logs[old], fenced)
	r.logs[loner] = append(r.logs[loner], Record{Kind: RecExit, TS: r.at(30), Err: "boom"})
	fenced.TS = r.at(30)
	r.logs[stranger] = append(r.logs[stranger], fenced)
	res := r.verify()
	if len(res.Unclean) != 2 {
		t.Fatalf("unclean %v: want m1.1 and m2.1 only", res.Unclean)
	}
	for _, u := range res.Unclean {
		if strings.HasPrefix(u, "m0.1") {
			t.Fatalf("the replaced member's stop was counted as unclean: %v", res.Unclean)
		}
	}
}

// TestRunRefusesAUsedDirectory: a run directory that holds an earlier
// run's files is refused before anything starts (a make chaos into a kept
// directory read the old run's acknowledgements and cluster data as its
// own: 835,887 "sequence number mismatches"); a missing or empty one is
// fine.
func TestRunRefusesAUsedDirectory(t *testing.T) {
	used := t.TempDir()
	if err := os.WriteFile(filepath.Join(used, "acked.jsonl"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := ShortConfig()
	cfg.Dir = used
	cfg.MemberCommand = []string{"/bin/false"} // never started: refused first
	_, err := Run(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "is not empty") {
		t.Fatalf("Run into a used directory: %v", err)
	}
	if err := requireEmptyDir(t.TempDir()); err != nil {
		t.Fatalf("an empty directory: %v", err)
	}
	if err := requireEmptyDir(filepath.Join(t.TempDir(), "new")); err != nil {
		t.Fatalf("a missing directory: %v", err)
	}
}

// commitFailed logs, as member key at sec, that a commit of offset off of
// partition p failed.
func (r *fakeRun) commitFailed(key string, sec float64, p int32, off int64) {
	r.logs[key] = append(r.logs[key], Record{Kind: RecCommitFailed, TS: r.at(sec), Offsets: map[string]map[int32]int64{fakeTopic: {p: off}}})
}

// TestVerifyRedeliveryBelowAFailedCommit: a's auto-commit of offset 10
// reached the store at 9.5 s but failed at a (as when Kafka's coordinator
// appends a commit, times out waiting for a replica on a dead broker and
// answers with an error, keeping 5 in its cache); b then starts at 5. Its
// redeliveries of 5..9 are explained: the member was told that the commit
// failed (at-least-once). They stay unexplained when the commit succeeded
// at the member (no failure logged), when another commit of 10 succeeded
// (a retry), when the failure logged is another offset's, and when it was
// logged long after the store applied the commit.
func TestVerifyRedeliveryBelowAFailedCommit(t *testing.T) {
	for _, tc := range []struct {
		name      string
		edit      func(r *fakeRun, a string)
		explained bool
	}{
		{"commit failed at the member", func(r *fakeRun, a string) { r.commitFailed(a, 11.2, 0, 10) }, true},
		{"commit succeeded at the member", func(r *fakeRun, a string) {}, false},
		{"a retry of the failed commit succeeded", func(r *fakeRun, a string) {
			r.commitFailed(a, 11.2, 0, 10)
			r.commit(0, 10, 11.5)
		}, false},
		{"another offset's commit failed", func(r *fakeRun, a string) { r.commitFailed(a, 11.2, 0, 9) }, false},
		{"the failure came long after", func(r *fakeRun, a string) { r.commitFailed(a, 45, 0, 10) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newFakeRun(t)
			a := r.member(0, 1, 0, 60, "final", 0)
			b := r.member(1, 1, 0, 60, "final", 0)
			r.assign(a, 0.5, 0)
			r.deliver(a, 0, 0, 9, 1, 1) // t=1..10
			r.commit(0, 5, 5.5)
			r.commit(0, 10, 9.5) // in the store; a was told it failed, or not
			r.release(a, 11, true, 0)
			r.assign(b, 12, 0)
			tc.edit(r, a)
			r.deliver(b, 0, 5, 14, 13, 0.1) // from the coordinator's 5
			r.release(b, 59, false, 0)
			r.ack(0, 0, 14)
			res := r.verify()
			if tc.explained {
				if res.Explained[reasonCommitFailed] != 5 || res.UnexplainedCount() != 0 || !res.Passed() {
					t.Fatalf("explained %v, unexplained %+v, failures %v", res.Explained, res.Unexplained, res.Failures())
				}
				return
			}
			if res.UnexplainedCount() != 5 || res.Unexplained[0].Reason != "redelivered below the offset committed before the new owner started" ||
				res.Explained[reasonCommitFailed] != 0 || res.Passed() {
				t.Fatalf("explained %v, unexplained %+v", res.Explained, res.Unexplained)
			}
		})
	}
}
