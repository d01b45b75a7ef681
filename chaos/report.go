package chaos

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// defaultListed bounds each detail list of the report unless
// Result.ListLimit says otherwise.
const defaultListed = 25

func (r *Result) listLimit() int {
	if r.ListLimit > 0 {
		return r.ListLimit
	}
	return defaultListed
}

// Report writes the human-readable verdict: the run, the faults, the
// message counts, the safety checks, then the details of every failure.
func (r *Result) Report(w io.Writer) {
	info := r.Info
	fmt.Fprintf(w, "zkconsumer chaos report\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k, format string, args ...any) { fmt.Fprintf(tw, "%s\t%s\n", k, fmt.Sprintf(format, args...)) }
	row("command", "%s", orDash(info.CommandLine))
	row("seed", "%d", info.Seed)
	row("topology", "%s: %s", orDash(string(info.Topology)), info.topologyLine())
	row("machine", "%d CPUs, %d MiB memory, %s %s", info.Machine.CPUs, info.Machine.MemoryMiB, info.Machine.Go, info.Machine.OS)
	row("duration", "%s in total: fault phase %s, production ended %s later, drain %s, shutdown %s",
		dur(info.Start, info.End), dur(info.FaultsStart, info.FaultsEnd), dur(info.FaultsEnd, max(info.FaultsEnd, info.ProduceEnd)),
		dur(info.ProduceEnd, info.DrainEnd), dur(info.DrainEnd, info.End))
	wild := 0
	for slot := range info.Members {
		if info.Topology.wildcard(slot) {
			wild++
		}
	}
	row("group", "%s: %d members (%d with whitelist %q), %d streams each, %d incarnations; session timeout %v, auto-commit every %v",
		info.Group, info.Members, wild, info.Whitelist, info.Streams, len(r.Incarnations), info.SessionTimeout, info.CommitInterval)
	var topics []string
	for _, t := range info.Topics {
		topics = append(topics, fmt.Sprintf("%s (%d partitions)", t.Name, t.Partitions))
	}
	row("topics", "%s; replication factor 3, min.insync.replicas 2", strings.Join(topics, ", "))
	if r.Dir != "" {
		state := "kept"
		if r.Removed {
			state = "removed (the run passed; -keep keeps it)"
		}
		row("logs", "%s (%s)", r.Dir, state)
	}
	tw.Flush()

	r.reportFaults(w)

	fmt.Fprintf(w, "\nmessages\n")
	num := func(k string, n int, note string) { fmt.Fprintf(w, "  %-88s %11s  %s\n", k, commas(n), note) }
	num("sent by the producer", info.Sent, "")
	num("acknowledged (acks=all)", r.Acked, "")
	num("produce failures (not acknowledged)", info.ProduceFails, "")
	num("distinct messages delivered", r.Distinct, "")
	num("delivered but not acknowledged", r.DeliveredNotAcked, "")
	num("lost (acknowledged, never delivered)", r.Lost, verdict(r.Lost == 0))
	num("deliveries in total", r.Deliveries, "")
	num("duplicates (deliveries after the first)", r.Duplicates, "")
	for _, reason := range sortedKeys(r.Explained) {
		num("  explained: "+reason, r.Explained[reason], "")
	}
	num("  unexplained", r.UnexplainedCount(), verdict(r.UnexplainedCount() == 0))
	num("sequence number mismatches", r.SeqMismatches, verdict(r.SeqMismatches == 0))

	fmt.Fprintf(w, "\nsafety\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	check := func(k, v, verdict string) { fmt.Fprintf(tw, "  %s\t%s\t%s\n", k, v, verdict) }
	check("double ownership while running", fmt.Sprintf("%.1f ms, %d messages, %d partitions, %d instances",
		r.Double.TotalMs, r.Double.Messages, r.Double.Partitions, len(r.Double.Instances)),
		verdict(r.Double.TotalMs == 0 && r.Double.Messages == 0))
	check("listener ownership overlap (secondary)", fmt.Sprintf("%.1f ms, %d partitions, %d instances",
		r.Listener.TotalMs, r.Listener.Partitions, len(r.Listener.Instances)), "info")
	check("deliveries outside listener ownership", commas(r.OutsideOwnership), "info")
	back := int64(0)
	for _, g := range r.Regressions {
		back += g.From - g.To
	}
	obs := r.Observation
	check("committed offsets observed", fmt.Sprintf("%s commits of the group in %s %s (%s entries read)%s",
		commas(obs.Commits), orDash(obs.Store), observedFrom(obs.Store), commas(obs.Entries), problemsSuffix(obs.Problems)),
		verdict(len(obs.Problems) == 0))
	check("committed offsets that went backwards", fmt.Sprintf("%d times, %s messages in all", len(r.Regressions), commas(int(back))),
		verdict(len(r.Regressions) == 0))
	if obs.Store == storeZooKeeper || len(r.NonOwnerWrites) > 0 {
		check("offset writes by sessions without the owner node", fmt.Sprint(len(r.NonOwnerWrites)), verdict(len(r.NonOwnerWrites) == 0))
	}
	if r.Info.Coordination == "kafka" {
		check("longest gap between answered heartbeats", fmt.Sprintf("%d ms (%s) that no fault explains; %d ms (%s) in all; session timeout %v",
			r.HeartbeatGap.UnexcusedMs, orDash(r.HeartbeatGap.UnexcusedMember), r.HeartbeatGap.Ms, orDash(r.HeartbeatGap.Member), r.Info.SessionTimeout),
			verdict(r.HeartbeatGap.UnexcusedMs < r.Info.SessionTimeout.Milliseconds()))
	}
	check("panics", fmt.Sprint(len(r.Panics)), verdict(len(r.Panics) == 0))
	check("data races (race-enabled members)", fmt.Sprint(len(r.Races)), verdict(len(r.Races) == 0))
	check("unclean exits", fmt.Sprint(len(r.Unclean)), verdict(len(r.Unclean) == 0))
	check("goroutines leaked after Shutdown", fmt.Sprint(len(r.Leaks)), verdict(len(r.Leaks) == 0))
	owners := fmt.Sprintf("agree after %.1f s (%d partitions, %d members)", float64(r.Owners.WaitedMs)/1000, len(r.Owners.Expected), len(r.Owners.Registered))
	if !r.Owners.Converged {
		owners = fmt.Sprintf("%d mismatches after %.1f s", len(r.Owners.Mismatches), float64(r.Owners.WaitedMs)/1000)
	}
	check("final owners vs assignor", owners, verdict(r.Owners.Converged))
	check("errors from Errors()/Next", commas(r.Errors), "info")
	tw.Flush()

	r.reportDetails(w)

	fmt.Fprintln(w)
	if f := r.Failures(); len(f) > 0 {
		fmt.Fprintf(w, "verdict: FAIL: %s\n", strings.Join(f, "; "))
	} else {
		fmt.Fprintf(w, "verdict: PASS\n")
	}
}

func (r *Result) reportFaults(w io.Writer) {
	type stat struct {
		n, errs int
		total   time.Duration
	}
	stats := map[FaultKind]*stat{}
	for _, f := range r.Faults {
		s := stats[f.Kind]
		if s == nil {
			s = &stat{}
			stats[f.Kind] = s
		}
		s.n++
		s.total += time.Duration(f.End - f.Start)
		if f.Err != "" {
			s.errs++
		}
	}
	fmt.Fprintf(w, "\nfaults: %d planned, %d injected\n", r.Info.FaultsPlanned, len(r.Faults))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "  kind\tcount\ttime\tfailed\t\n")
	for _, k := range AllKinds {
		if s := stats[k]; s != nil {
			fmt.Fprintf(tw, "  %s\t%d\t%s\t%d\t\n", k, s.n, s.total.Round(100*time.Millisecond), s.errs)
		}
	}
	tw.Flush()
}

func (r *Result) reportDetails(w io.Writer) {
	if len(r.Double.Instances) > 0 {
		fmt.Fprintf(w, "\ndouble ownership while running (delivery tenures overlapping), longest first:\n")
		r.listOverlaps(w, r.Double.Instances, true)
	}
	if len(r.Listener.Instances) > 0 {
		fmt.Fprintf(w, "\nlistener ownership overlap (secondary), longest first:\n")
		r.listOverlaps(w, r.Listener.Instances, false)
	}
	if len(r.Unexplained) > 0 {
		fmt.Fprintf(w, "\nunexplained duplicates, by preceding fault and members (largest first):\n")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  fault\tpartition\tfirst by\tagain by\tcount\toffsets\tfirst again at\treason\n")
		for i, g := range r.Unexplained {
			if i == r.listLimit() {
				fmt.Fprintf(tw, "  ... %d more groups\n", len(r.Unexplained)-i)
				break
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%d\t%d-%d\t%s\t%s\n", r.faultName(g.Fault), g.Partition, g.First, g.Again,
				g.Count, g.MinOffset, g.MaxOffset, r.clock(g.FirstAgain), g.Reason)
		}
		tw.Flush()
	}
	list := func(title string, items []string) {
		if len(items) == 0 {
			return
		}
		fmt.Fprintf(w, "\n%s:\n", title)
		for i, s := range items {
			if i == r.listLimit() {
				fmt.Fprintf(w, "  ... %d more\n", len(items)-i)
				break
			}
			fmt.Fprintf(w, "  %s\n", s)
		}
	}
	var regressions []string
	for _, g := range r.Regressions {
		regressions = append(regressions, fmt.Sprintf("%s at %s", g, r.clock(g.At)))
	}
	list("committed offsets that went backwards", regressions)
	var nonOwner []string
	for _, w := range r.NonOwnerWrites {
		nonOwner = append(nonOwner, fmt.Sprintf("%s: %d by %s at %s: %s", w.Partition, w.Offset, orDash(w.By), r.clock(w.At), w.Why))
	}
	list("offset writes by sessions without the owner node", nonOwner)
	list("problems of the committed-offset observation", r.Observation.Problems)
	list("lost messages (sample)", r.LostSample)
	list("sequence number mismatches (sample)", r.SeqSample)
	list("deliveries outside listener ownership (sample)", r.OutsideSample)
	list("panics", r.Panics)
	list("data races", r.Races)
	list("unclean exits", r.Unclean)
	list("goroutine leaks", r.Leaks)
	if !r.Owners.Converged {
		list("final owner mismatches", r.Owners.Mismatches)
	}
	var errs []string
	for i, e := range r.TopErrs {
		if i == 10 {
			break
		}
		errs = append(errs, fmt.Sprintf("%6d  %s", e.Count, e.Text))
	}
	list("most frequent errors reported to the members (digits folded to #)", errs)
	list("problems of the run itself", r.Problems)
}

func (r *Result) listOverlaps(w io.Writer, list []Overlap, messages bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  partition\tearlier\tlater\tfrom\tms\tmessages\tafter fault\n")
	for i, o := range list {
		if i == r.listLimit() {
			fmt.Fprintf(tw, "  ... %d more\n", len(list)-i)
			break
		}
		n := "-"
		if messages {
			n = fmt.Sprint(o.Messages)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%.1f\t%s\t%s\n", o.Partition, o.Earlier, o.Later, r.clock(o.Start), o.Ms, n, r.faultName(o.Fault))
	}
	tw.Flush()
}

// faultName describes fault id for the detail lists.
func (r *Result) faultName(id int) string {
	for _, f := range r.Faults {
		if f.ID == id {
			target := f.Target()
			if keys := f.TargetKeys(); len(keys) > 0 {
				target = strings.Join(keys, "+")
			}
			return fmt.Sprintf("#%d %s %s @%s", f.ID, f.Kind, target, r.clock(f.Start))
		}
	}
	return "none"
}

// clock formats ts as seconds since the start of the fault phase.
func (r *Result) clock(ts int64) string {
	return fmt.Sprintf("%+.3fs", float64(ts-r.Info.FaultsStart)/1e9)
}

func (v *verifier) clock(ts int64) string { return v.res.clock(ts) }

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}

func dur(from, to int64) string {
	if from == 0 || to == 0 || to < from {
		return "-"
	}
	return time.Duration(to - from).Round(100 * time.Millisecond).String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// commas formats n with thousands separators.
func commas(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + commas(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func sortedKeys(m map[string]int) []string { return slices.Sorted(maps.Keys(m)) }

// topologyLine describes the topology's settings.
func (info RunInfo) topologyLine() string {
	static := ""
	if info.StaticMembers {
		static = ", static members"
	}
	cluster := fmt.Sprintf("%d ZooKeeper servers", info.ZooKeeperServers)
	if info.KRaft {
		cluster = "KRaft (Kafka 4, every node a broker and a controller)"
	}
	protocol := ""
	if info.GroupProtocol != "" {
		protocol = ", group.protocol " + info.GroupProtocol
	}
	return fmt.Sprintf("%s, coordination %s%s, offsets in %s, %s assignment%s",
		cluster, orDash(info.Coordination), protocol, orDash(info.OffsetsStorage), orDash(info.Assignment), static)
}

func observedFrom(store string) string {
	switch store {
	case storeZooKeeper:
		return "(every server's transaction log)"
	case storeKafka:
		return "(__consumer_offsets from its first record)"
	}
	return ""
}

func problemsSuffix(p []string) string {
	if len(p) == 0 {
		return ""
	}
	return fmt.Sprintf("; %d problems (listed below)", len(p))
}
