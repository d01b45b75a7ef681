package chaos

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

// Result is the verdict of a run, computed by Verify from its directory.
type Result struct {
	// Dir is the run directory; Removed reports that it was deleted
	// because the run passed.
	Dir     string
	Removed bool
	// ListLimit bounds each detail list of the report; 25 if zero.
	ListLimit int

	Info         RunInfo
	Faults       []FaultRecord
	Incarnations []Incarnation

	Acked             int
	Deliveries        int
	Distinct          int
	DeliveredNotAcked int
	Lost              int
	LostSample        []string
	SeqMismatches     int
	SeqSample         []string
	TruncatedLines    int

	Duplicates  int
	Explained   map[string]int // by explanation
	Unexplained []DuplicateGroup

	// Observation says how the committed offsets were observed; its
	// problems fail the run.
	Observation CommitObservation
	// Regressions are committed offsets that went backwards.
	Regressions []Regression
	// NonOwnerWrites are commits to ZooKeeper by sessions that did not
	// hold the partition's owner node.
	NonOwnerWrites []NonOwnerWrite

	Double           Overlaps // delivery tenures: the primary criterion
	Listener         Overlaps // listener ownership periods: secondary
	OutsideOwnership int
	OutsideSample    []string

	Panics []string
	// HeartbeatGap is the longest gap between answered heartbeats of a
	// generation that kept its membership, over every member (Kafka
	// coordination), and the member that had it. Unexcused is the longest
	// gap that no fault explains: one that overlaps no fault keeping the
	// member from its coordinator (a coordinator paused or killed, the
	// member cut off the brokers) or freezing the member.
	HeartbeatGap struct {
		Ms              int64
		Member          string
		UnexcusedMs     int64
		UnexcusedMember string
	}
	Races    []string
	Unclean  []string
	Leaks    []string
	Errors   int
	TopErrs  []CountedString
	Owners   OwnersCheck
	Problems []string // the run itself went wrong (faults not injected, ...)
}

// CountedString is a message and how often it occurred.
type CountedString struct {
	Text  string
	Count int
}

// DuplicateGroup gathers unexplained duplicates of one partition with the
// same members, reason and preceding fault.
type DuplicateGroup struct {
	Fault      int // the fault blamed (see faultBefore); 0 if none
	Partition  string
	First      string // incarnation of the earlier delivery
	Again      string // incarnation of the redelivery
	Reason     string
	Count      int
	MinOffset  int64
	MaxOffset  int64
	FirstAgain int64 // time of the first redelivery
}

// UnexplainedCount sums the unexplained duplicates.
func (r *Result) UnexplainedCount() int {
	n := 0
	for _, g := range r.Unexplained {
		n += g.Count
	}
	return n
}

// Failures lists why the run failed; empty when it passed.
func (r *Result) Failures() []string {
	var out []string
	add := func(cond bool, format string, args ...any) {
		if cond {
			out = append(out, fmt.Sprintf(format, args...))
		}
	}
	add(r.Lost > 0, "%d acknowledged messages lost", r.Lost)
	add(r.Double.TotalMs > 0 || r.Double.Messages > 0,
		"double ownership while running: %.1f ms, %d messages", r.Double.TotalMs, r.Double.Messages)
	add(len(r.Panics) > 0, "%d panics", len(r.Panics))
	add(len(r.Races) > 0, "%d members reported data races", len(r.Races))
	add(r.HeartbeatGap.UnexcusedMs >= r.Info.SessionTimeout.Milliseconds() && r.Info.Coordination == "kafka",
		"%s had %d ms between answered heartbeats that no fault explains, past the %v session timeout",
		r.HeartbeatGap.UnexcusedMember, r.HeartbeatGap.UnexcusedMs, r.Info.SessionTimeout)
	add(len(r.Unclean) > 0, "%d unclean exits", len(r.Unclean))
	add(len(r.Leaks) > 0, "%d members leaked goroutines", len(r.Leaks))
	add(!r.Owners.Converged, "final owners differ from the assignor (%d mismatches)", len(r.Owners.Mismatches))
	add(r.SeqMismatches > 0, "%d deliveries with another sequence number than acknowledged", r.SeqMismatches)
	add(len(r.Regressions) > 0, "%d committed-offset regressions", len(r.Regressions))
	add(r.UnexplainedCount() > 0, "%d unexplained duplicates", r.UnexplainedCount())
	add(len(r.NonOwnerWrites) > 0, "%d offset commits to ZooKeeper by sessions that did not own the partition", len(r.NonOwnerWrites))
	add(len(r.Observation.Problems) > 0, "committed offsets not observed without gaps: %s", firstLine(strings.Join(r.Observation.Problems, "; ")))
	return out
}

// Passed reports whether the run kept every promise.
func (r *Result) Passed() bool { return len(r.Failures()) == 0 }

// delivery is one delivery of a partition's message.
type delivery struct {
	off int64
	ts  int64
	seq int64
	inc int32 // index into Result.Incarnations
}

// incLog is what one incarnation's log holds besides deliveries.
type incLog struct {
	inc      *Incarnation
	started  bool
	exit     *Record
	panics   []string
	periods  map[topicPartition][]period
	frozen   [][2]int64 // SIGSTOP windows
	stopTime int64      // when the process stopped running: kill or exit
}

// period is one ownership period of a partition (see the package doc).
type period struct {
	start, end int64 // end is the release time, or the incarnation's end
	released   bool
	lost       bool
	lastOff    int64 // highest offset delivered in the period; -1 if none
}

// verifier holds a run being verified.
type verifier struct {
	dir     string
	res     *Result
	incs    []*incLog
	byKey   map[string]int32
	acked   map[topicPartition][][2]int64 // offset, seq
	dels    map[topicPartition][]delivery
	errMsg  map[string]int
	commits map[topicPartition][]CommitRecord // observed commits, in store order
	// failed are the commits that failed at the members, by partition.
	failed map[topicPartition][]failedCommit
	// firstOf is the time of the first delivery in each ownership period.
	firstOf map[periodKey]int64
}

// periodKey names ownership period pi of tp of incarnation inc.
type periodKey struct {
	inc int32
	tp  topicPartition
	pi  int
}

func (v *verifier) path(name string) string { return filepath.Join(v.dir, name) }

// Verify reads the run directory written by Run and computes the verdict.
func Verify(dir string) (*Result, error) {
	v := &verifier{dir: dir, res: &Result{Dir: dir, Explained: map[string]int{}},
		byKey: map[string]int32{}, acked: map[topicPartition][][2]int64{},
		dels: map[topicPartition][]delivery{}, errMsg: map[string]int{},
		commits: map[topicPartition][]CommitRecord{}, failed: map[topicPartition][]failedCommit{},
		firstOf: map[periodKey]int64{}}
	if err := v.load(); err != nil {
		return nil, err
	}
	v.checkMessages()
	v.checkOwnership()
	v.checkProcesses()
	return v.res, nil
}

func (v *verifier) load() error {
	data, err := os.ReadFile(filepath.Join(v.dir, runFile))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, &v.res.Info); err != nil {
		return fmt.Errorf("chaos: %s: %w", runFile, err)
	}
	if err := readJSONLines(filepath.Join(v.dir, faultsFile), &v.res.Faults); err != nil {
		return err
	}
	if err := readJSONLines(filepath.Join(v.dir, incarnationsFile), &v.res.Incarnations); err != nil {
		return err
	}
	if data, err := os.ReadFile(filepath.Join(v.dir, ownersFile)); err != nil {
		v.res.Owners = OwnersCheck{Err: err.Error(), Mismatches: []string{"no owner check: " + err.Error()}}
	} else if err := json.Unmarshal(data, &v.res.Owners); err != nil {
		return fmt.Errorf("chaos: %s: %w", ownersFile, err)
	}
	if err := v.loadAcked(); err != nil {
		return err
	}
	if err := v.loadOffsets(); err != nil {
		return err
	}
	for i := range v.res.Incarnations {
		inc := &v.res.Incarnations[i]
		il := &incLog{inc: inc, periods: map[topicPartition][]period{}, stopTime: inc.End}
		if inc.End == 0 {
			il.stopTime = v.res.Info.End
		}
		v.byKey[inc.Key()] = int32(i)
		v.incs = append(v.incs, il)
	}
	for _, f := range v.res.Faults {
		if f.Err != "" {
			v.res.Problems = append(v.res.Problems, fmt.Sprintf("fault #%d %s (%s): %s", f.ID, f.Kind, f.Target(), f.Err))
		}
		for _, key := range f.FrozenKeys() {
			if i, ok := v.byKey[key]; ok {
				v.incs[i].frozen = append(v.incs[i].frozen, [2]int64{f.Start, f.End})
			}
		}
		if i, ok := v.byKey[f.KilledKey()]; ok && f.KillAt != 0 {
			// The process stopped running when it was killed, a little
			// before it was reaped.
			v.incs[i].stopTime = min(v.incs[i].stopTime, f.KillAt)
		}
	}
	for i, il := range v.incs {
		if err := v.loadMember(int32(i), il); err != nil {
			return err
		}
	}
	for tp, ds := range v.dels {
		for _, d := range ds {
			i := v.incs[d.inc].periodIndex(tp, d.ts)
			if i >= 0 {
				pr := &v.incs[d.inc].periods[tp][i]
				pr.lastOff = max(pr.lastOff, d.off)
			}
			k := periodKey{d.inc, tp, i}
			if t, ok := v.firstOf[k]; !ok || d.ts < t {
				v.firstOf[k] = d.ts
			}
		}
		slices.SortFunc(ds, func(a, b delivery) int {
			if a.off != b.off {
				return cmpInt64(a.off, b.off)
			}
			return cmpInt64(a.ts, b.ts)
		})
		v.dels[tp] = ds
	}
	return nil
}

func (v *verifier) loadAcked() error {
	f, err := os.Open(filepath.Join(v.dir, ackedFile))
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var a struct {
		T string `json:"t"`
		P int32  `json:"p"`
		O int64  `json:"o"`
		S int64  `json:"s"`
	}
	for {
		line, err := readLine(r)
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("chaos: %s: %w", ackedFile, err)
		}
		if len(line) == 0 {
			continue
		}
		if err := json.Unmarshal(line, &a); err != nil {
			return fmt.Errorf("chaos: %s: %w", ackedFile, err)
		}
		tp := topicPartition{a.T, a.P}
		v.acked[tp] = append(v.acked[tp], [2]int64{a.O, a.S})
		v.res.Acked++
	}
	for _, offs := range v.acked {
		slices.SortFunc(offs, func(a, b [2]int64) int { return cmpInt64(a[0], b[0]) })
	}
	return nil
}

// loadMember reads one incarnation's log.
func (v *verifier) loadMember(idx int32, il *incLog) error {
	open := map[topicPartition]int{} // partition -> index of its open period
	truncated, err := ReadLog(filepath.Join(v.dir, il.inc.Log), func(r *Record) error {
		switch r.Kind {
		case RecDelivery:
			tp := topicPartition{r.Topic, r.Partition}
			v.dels[tp] = append(v.dels[tp], delivery{off: r.Offset, ts: r.TS, seq: r.Seq, inc: idx})
			v.res.Deliveries++
		case RecStart:
			il.started = true
		case RecAssign:
			for t, ps := range r.Parts {
				for _, p := range ps {
					tp := topicPartition{t, p}
					if i, ok := open[tp]; ok { // assigned twice without a release
						il.periods[tp][i].end = r.TS
					}
					il.periods[tp] = append(il.periods[tp], period{start: r.TS, lastOff: -1})
					open[tp] = len(il.periods[tp]) - 1
				}
			}
		case RecRelease:
			for t, ps := range r.Parts {
				for _, p := range ps {
					tp := topicPartition{t, p}
					if i, ok := open[tp]; ok {
						pr := &il.periods[tp][i]
						pr.end, pr.released, pr.lost = r.TS, true, r.Lost
						delete(open, tp)
					}
				}
			}
		case RecError:
			v.res.Errors++
			v.errMsg[normalizeError(r.Err)]++
		case RecCommitFailed:
			for t, offs := range r.Offsets {
				for p, off := range offs {
					tp := topicPartition{t, p}
					v.failed[tp] = append(v.failed[tp], failedCommit{off: off, ts: r.TS})
				}
			}
		case RecPanic:
			il.panics = append(il.panics, r.Err)
		case RecExit:
			rec := *r
			il.exit = &rec
		}
		return nil
	})
	if errors.Is(err, os.ErrNotExist) {
		return nil // the process never got as far as opening its log
	}
	if err != nil {
		return err
	}
	v.res.TruncatedLines += truncated
	for tp, i := range open {
		il.periods[tp][i].end = il.stopTime
	}
	return nil
}

var digits = regexp.MustCompile(`[0-9]+`)

// normalizeError folds errors that differ only in numbers (ids, offsets).
func normalizeError(s string) string {
	if len(s) > 160 {
		s = s[:160] + "..."
	}
	return digits.ReplaceAllString(s, "#")
}

// checkMessages computes losses and classifies duplicates.
func (v *verifier) checkMessages() {
	res := v.res
	groups := map[DuplicateGroup]*DuplicateGroup{}
	for _, tp := range sortedTPs(v.dels, v.acked) {
		ds := v.dels[tp]
		acked := v.acked[tp]
		ai := 0
		for i := 0; i < len(ds); {
			j := i + 1
			for j < len(ds) && ds[j].off == ds[i].off {
				j++
			}
			res.Distinct++
			for ai < len(acked) && acked[ai][0] < ds[i].off {
				v.lost(tp, acked[ai][0])
				ai++
			}
			if ai < len(acked) && acked[ai][0] == ds[i].off {
				for k := i; k < j; k++ {
					if ds[k].seq != acked[ai][1] {
						res.SeqMismatches++
						if len(res.SeqSample) < 5 {
							res.SeqSample = append(res.SeqSample, fmt.Sprintf("%s@%d: acked seq %d, delivered seq %d by %s",
								tp, ds[k].off, acked[ai][1], ds[k].seq, v.res.Incarnations[ds[k].inc].Key()))
						}
					}
				}
				ai++
			} else {
				res.DeliveredNotAcked++
			}
			for k := i + 1; k < j; k++ {
				res.Duplicates++
				explained, reason := v.classify(tp, ds[k-1], ds[k])
				if explained {
					res.Explained[reason]++
					continue
				}
				first, again := v.res.Incarnations[ds[k-1].inc].Key(), v.res.Incarnations[ds[k].inc].Key()
				key := DuplicateGroup{
					Fault: v.faultBefore(ds[k].ts, first, again), Partition: tp.String(), Reason: reason,
					First: first, Again: again,
				}
				g := groups[key]
				if g == nil {
					g = &DuplicateGroup{}
					*g = key
					g.MinOffset, g.FirstAgain = ds[k].off, ds[k].ts
					groups[key] = g
				}
				g.Count++
				g.MaxOffset = ds[k].off
			}
			i = j
		}
		for ; ai < len(acked); ai++ {
			v.lost(tp, acked[ai][0])
		}
	}
	for _, g := range groups {
		res.Unexplained = append(res.Unexplained, *g)
	}
	sort.Slice(res.Unexplained, func(i, j int) bool {
		a, b := res.Unexplained[i], res.Unexplained[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.FirstAgain < b.FirstAgain
	})
}

func (v *verifier) lost(tp topicPartition, off int64) {
	v.res.Lost++
	if len(v.res.LostSample) < 10 {
		v.res.LostSample = append(v.res.LostSample, fmt.Sprintf("%s@%d", tp, off))
	}
}

// classify decides whether the redelivery again of the message first
// delivered in prev is explained (see the package documentation).
func (v *verifier) classify(tp topicPartition, prev, again delivery) (bool, string) {
	il := v.incs[prev.inc]
	pi := il.periodIndex(tp, prev.ts)
	if pi < 0 {
		return false, "first delivered outside any ownership period"
	}
	pr := il.periods[tp][pi]
	api := v.incs[again.inc].periodIndex(tp, again.ts)
	if again.inc == prev.inc && api == pi {
		return false, "delivered twice within one ownership period"
	}
	// The new owner started from the offset committed when it took the
	// partition over: before its first delivery in its period. The message
	// is in the uncommitted tail only if no commit before then had passed
	// it: otherwise it was committed once, and the offset went back or the
	// new owner started below it.
	//
	// Unless every commit that had passed it failed at its member: the
	// store may hold such a commit (Kafka's coordinator can append it and
	// answer with an error, keeping the offset before in its cache), but
	// the member was told it failed, so the offset the group goes on from
	// may be the one before, and the message comes again (at-least-once).
	takeover := v.firstOf[periodKey{again.inc, tp, api}]
	failedCover := false
	if highest, ok := v.highestCommit(tp, takeover); ok && prev.off < highest {
		failedCover = v.passedOnlyByFailedCommits(tp, prev.off, takeover)
		if !failedCover {
			if last, ok := v.lastCommit(tp, takeover); !ok || last <= prev.off {
				return false, "redelivered after the committed offset went back"
			}
			return false, "redelivered below the offset committed before the new owner started"
		}
	}
	if pr.released && !pr.lost && again.inc != prev.inc && again.ts < pr.end {
		return false, "redelivered while the earlier deliverer still owned the partition"
	}
	if failedCover {
		return true, reasonCommitFailed
	}
	return v.explainEnd(tp, prev, il, pr)
}

// reasonCommitFailed explains a redelivery below a commit that failed at
// its member (see classify).
const reasonCommitFailed = "commit failed at the member, the store may still apply it: re-delivery expected (at-least-once)"

// explainEnd tells whether the end of period pr, in which prev was
// delivered and which left prev's offset uncommitted, explains the
// redelivery: an ending without an orderly hand-over (kill -9, a lost
// session or membership, a death), the message in hand at an orderly
// release, or an orderly release while the member could not reach its
// offset store.
func (v *verifier) explainEnd(tp topicPartition, prev delivery, il *incLog, pr period) (bool, string) {
	if pr.released {
		switch {
		case pr.lost:
			return true, "ownership lost (session or membership): uncommitted tail"
		case prev.off == pr.lastOff:
			// Not consumed yet: the reader had not asked for the
			// next message when the partition was revoked.
			return true, "in hand at an orderly release"
		}
		if f := v.storeCut(il.inc.Key(), pr.end); f != nil {
			return true, fmt.Sprintf("orderly release while its offset store was out of reach (%s): uncommitted tail", f.Kind)
		}
		return false, "consumed before an orderly release but not committed"
	}
	switch il.inc.Ending {
	case "kill", "forced":
		return true, "kill -9: uncommitted tail"
	case "":
		return true, "died on its own: uncommitted tail"
	}
	return false, "exited without releasing the partition"
}

// storeCutWindow is how long before an orderly release a fault that cut
// a member off its offset store still explains a commit that failed at
// the release: the commit is tried for a few seconds (retries and their
// backoff) before the partitions are released.
const storeCutWindow = 10 * time.Second

// storeCut returns the fault that kept incarnation key from its offset
// store at some time in [t - storeCutWindow, t], or nil.
func (v *verifier) storeCut(key string, t int64) *FaultRecord {
	var found *FaultRecord
	for i := range v.res.Faults {
		f := &v.res.Faults[i]
		if f.Start > t || f.End < t-storeCutWindow.Nanoseconds() {
			continue
		}
		if slices.Contains(f.StoreCut, key) || slices.Contains(f.StoreCut, "*") {
			found = f
		}
	}
	return found
}

// faultBefore returns the fault to blame for something that happened at ts
// to the incarnations keys: the latest fault that hit one of them and ended
// less than a minute before ts, or else the latest fault that started
// before ts; 0 if there is none.
func (v *verifier) faultBefore(ts int64, keys ...string) int {
	latest, targeted := 0, 0
	for _, f := range v.res.Faults {
		if f.Start > ts {
			continue
		}
		latest = f.ID
		for _, k := range f.TargetKeys() {
			if slices.Contains(keys, k) && ts-f.End < int64(time.Minute) {
				targeted = f.ID
			}
		}
	}
	if targeted != 0 {
		return targeted
	}
	return latest
}

// periodAt returns the period of tp a delivery at ts belongs to: the latest
// one that started at or before ts.
func (il *incLog) periodAt(tp topicPartition, ts int64) (period, bool) {
	i := il.periodIndex(tp, ts)
	if i < 0 {
		return period{}, false
	}
	return il.periods[tp][i], true
}

// periodIndex is periodAt's index into il.periods[tp], or -1.
func (il *incLog) periodIndex(tp topicPartition, ts int64) int {
	ps := il.periods[tp]
	return sort.Search(len(ps), func(i int) bool { return ps[i].start > ts }) - 1
}

// replaceTarget reports whether inc is the incarnation a static-replace
// fault replaced, and it ended after that fault began.
func (v *verifier) replaceTarget(inc *Incarnation) bool {
	for _, f := range v.res.Faults {
		if f.Kind == StaticReplace && f.Member == inc.Slot && f.Inc == inc.Inc && f.Start <= inc.End {
			return true
		}
	}
	return false
}

// gapExcused reports whether a fault explains the heartbeat gap g of
// incarnation key: it overlaps a fault that kept key from its coordinator
// (StoreCut) or froze it.
func (v *verifier) gapExcused(key string, g Span) bool {
	for _, f := range v.res.Faults {
		if f.Start > g.Until || f.End < g.From {
			continue
		}
		if slices.Contains(f.StoreCut, "*") || slices.Contains(f.StoreCut, key) || slices.Contains(f.FrozenKeys(), key) {
			return true
		}
	}
	return false
}

// checkProcesses finds panics, races, unclean exits and leaks.
func (v *verifier) checkProcesses() {
	res := v.res
	for _, il := range v.incs {
		inc := il.inc
		key := inc.Key()
		for _, p := range il.panics {
			res.Panics = append(res.Panics, fmt.Sprintf("%s: %s", key, firstLine(p)))
		}
		if len(il.panics) == 0 && (inc.Panic || (inc.ExitCode == exitPanic && inc.Signal == "")) {
			res.Panics = append(res.Panics, fmt.Sprintf("%s: panic or fatal error on stderr (%s), exit code %d", key, inc.Stderr, inc.ExitCode))
		}
		if inc.Race {
			res.Races = append(res.Races, fmt.Sprintf("%s: see %s", key, inc.Stderr))
		}
		if inc.HeartbeatGapMs > res.HeartbeatGap.Ms {
			res.HeartbeatGap.Ms, res.HeartbeatGap.Member = inc.HeartbeatGapMs, key
		}
		for _, g := range inc.LongGaps {
			if ms := (g.Until - g.From) / 1e6; ms > res.HeartbeatGap.UnexcusedMs && !v.gapExcused(key, g) {
				res.HeartbeatGap.UnexcusedMs, res.HeartbeatGap.UnexcusedMember = ms, key
			}
		}
		if il.exit != nil && il.exit.Leaked != "" {
			res.Leaks = append(res.Leaks, fmt.Sprintf("%s: %d goroutines after Shutdown: %s", key, il.exit.Goroutines, firstLine(il.exit.Leaked)))
		}
		cleanExit := il.exit != nil && il.exit.Clean && (inc.ExitCode == exitClean || inc.ExitCode == exitLeak)
		switch inc.Ending {
		case "kill":
		case "forced":
			res.Unclean = append(res.Unclean, fmt.Sprintf("%s: did not exit within the exit timeout after SIGINT; killed", key))
		case "leave", "final":
			if !cleanExit {
				res.Unclean = append(res.Unclean, fmt.Sprintf("%s: unclean exit after SIGINT (code %d%s)%s", key, inc.ExitCode, sigSuffix(inc.Signal), exitErr(il.exit)))
			}
		default:
			if il.exit != nil && il.exit.Replaced && v.replaceTarget(inc) {
				// The static member the fault replaced learnt it (its
				// join or heartbeat was fenced) and stopped, before the
				// driver ended it: what a replaced member must do.
				break
			}
			res.Unclean = append(res.Unclean, fmt.Sprintf("%s: exited on its own (code %d%s)%s", key, inc.ExitCode, sigSuffix(inc.Signal), exitErr(il.exit)))
		}
	}
	for msg, n := range v.errMsg {
		res.TopErrs = append(res.TopErrs, CountedString{msg, n})
	}
	sort.Slice(res.TopErrs, func(i, j int) bool {
		if res.TopErrs[i].Count != res.TopErrs[j].Count {
			return res.TopErrs[i].Count > res.TopErrs[j].Count
		}
		return res.TopErrs[i].Text < res.TopErrs[j].Text
	})
	if !res.Info.Settled {
		res.Problems = append(res.Problems, "the group had not settled when the faults began")
	}
	if res.Info.Undelivered > 0 {
		res.Problems = append(res.Problems, fmt.Sprintf("the drain gave up with %d acknowledged messages undelivered", res.Info.Undelivered))
	}
}

func sigSuffix(sig string) string {
	if sig == "" {
		return ""
	}
	return ", signal " + sig
}

func exitErr(r *Record) string {
	switch {
	case r == nil:
		return "; no exit record"
	case r.Err != "":
		return "; " + firstLine(r.Err)
	}
	return ""
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " ..."
	}
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

func sortedTPs(a map[topicPartition][]delivery, b map[topicPartition][][2]int64) []topicPartition {
	seen := map[topicPartition]bool{}
	var out []topicPartition
	for tp := range a {
		if !seen[tp] {
			seen[tp] = true
			out = append(out, tp)
		}
	}
	for tp := range b {
		if !seen[tp] {
			seen[tp] = true
			out = append(out, tp)
		}
	}
	slices.SortFunc(out, compareTP)
	return out
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func readJSONLines[T any](path string, out *[]T) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	for {
		line, err := readLine(r)
		if err == nil && len(line) > 0 {
			var item T
			if err := json.Unmarshal(line, &item); err != nil {
				return fmt.Errorf("chaos: %s: %w", path, err)
			}
			*out = append(*out, item)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("chaos: %s: %w", path, err)
		}
	}
}
