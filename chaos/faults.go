package chaos

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
)

// FaultRecord is a fault as it happened.
type FaultRecord struct {
	PlannedFault
	// Start and End bound the fault in Unix nanoseconds. For MemberStop
	// and OverlapStopTwo they are the freeze: from just after SIGSTOP to
	// just before SIGCONT. For MemberKill, Start is the kill and End the
	// restart; for a member cut, the cut.
	Start int64 `json:"start"`
	End   int64 `json:"end"`
	// Inc and Inc2 are the incarnations of the target members (Member,
	// Member2) the fault hit.
	Inc  int `json:"inc,omitempty"`
	Inc2 int `json:"inc2,omitempty"`
	// KillAt is when Inc was killed with SIGKILL (MemberKill, and
	// StaticReplace with a kill), 0 otherwise.
	KillAt int64 `json:"kill_at,omitempty"`
	// StoreCut lists the incarnations ("m<slot>.<inc>", or "*" for every
	// member) that the fault kept from their offset store (ZooKeeper, or
	// the group's coordinator for offsets in Kafka).
	StoreCut []string `json:"store_cut,omitempty"`
	// Detail says what exactly was done (servers, partitions, brokers).
	Detail string `json:"detail,omitempty"`
	// Err is set when the fault could not be carried out as planned.
	Err string `json:"err,omitempty"`
}

// TargetKeys names the member incarnations the fault targeted.
func (r FaultRecord) TargetKeys() []string {
	if !r.Kind.memberFault() || r.Inc == 0 {
		return nil
	}
	keys := []string{incKey(r.Member, r.Inc)}
	if r.Kind == OverlapStopTwo && r.Inc2 != 0 {
		keys = append(keys, incKey(r.Member2, r.Inc2))
	}
	return keys
}

// FrozenKeys names the incarnations the fault froze with SIGSTOP from
// Start to End.
func (r FaultRecord) FrozenKeys() []string {
	if r.Kind == MemberStop || r.Kind == OverlapStopTwo {
		return r.TargetKeys()
	}
	return nil
}

// KilledKey names the incarnation killed with SIGKILL at KillAt, if any.
func (r FaultRecord) KilledKey() string {
	if r.KillAt == 0 || r.Inc == 0 {
		return ""
	}
	return incKey(r.Member, r.Inc)
}

func incKey(slot, inc int) string { return fmt.Sprintf("m%d.%d", slot, inc) }

// topicInfo is a topic of the run and its current partition count.
type topicInfo struct {
	Name       string `json:"name"`
	Partitions int    `json:"partitions"`
}

// injector carries out faults against the cluster and the members.
type injector struct {
	cfg      Config
	cluster  *testcluster.Cluster
	members  *memberSet
	tracker  *tracker
	producer *producer
	net      *memberNets
	observer *zksession.Session // the driver's own ZooKeeper session; nil in Kafka mode
	group    string
	log      *slog.Logger
	prefix   string // topic name prefix

	mu     sync.Mutex
	topics []topicInfo
}

func (in *injector) topicList() []topicInfo {
	in.mu.Lock()
	defer in.mu.Unlock()
	return slices.Clone(in.topics)
}

// startMember starts a new incarnation of slot and follows its log.
func (in *injector) startMember(slot int) error {
	p, err := in.members.start(slot, false)
	if err != nil {
		return err
	}
	in.tracker.follow(p.Key(), filepath.Join(in.members.dir, p.Log))
	return nil
}

// run executes f and returns what happened.
func (in *injector) run(ctx context.Context, f PlannedFault) FaultRecord {
	rec := FaultRecord{PlannedFault: f, Start: time.Now().UnixNano()}
	in.log.Info("fault", "id", f.ID, "kind", f.Kind, "target", f.Target(), "hold", f.Hold)
	var err error
	switch f.Kind {
	case MemberKill, MemberLeave:
		err = in.memberRestart(ctx, f, &rec)
	case MemberStop, OverlapStopTwo:
		err = in.memberStop(ctx, f, &rec)
	case StaticReplace:
		err = in.staticReplace(ctx, f, &rec)
	case MemberZKCutShort, MemberZKCutLong, MemberZKCutExpiry, MemberBrokerCutShort, MemberBrokerCutLong:
		err = in.memberCut(ctx, f, &rec)
	case OverlapZKCutLeaderRestart:
		err = in.cutDuringLeaderRestart(ctx, f, &rec)
	case ZKPauseShort, ZKPauseLong, ZKRestart, ZKLeaderRestart, ZKFollowerRestart,
		ZKPauseConnected, ZKQuorumLoss, ZKFollowerIsolate:
		err = in.zooKeeperFault(ctx, f, &rec)
	case BrokerKill, BrokerPause, CoordinatorKill, CoordinatorPause:
		err = in.brokerFault(ctx, f, &rec)
	case OverlapBrokerPauseRebalance:
		err = in.brokerPauseDuringRebalance(ctx, f, &rec)
	case LeaderMove:
		rec.Detail, err = in.moveLeaders(ctx, f)
	case AddPartitions:
		rec.Detail, err = in.addPartitions(ctx, f)
	case NewTopic:
		rec.Detail, err = in.newTopic(ctx, f)
	default:
		err = fmt.Errorf("unknown fault kind %q", f.Kind)
	}
	if rec.End == 0 {
		rec.End = time.Now().UnixNano()
	}
	if err != nil {
		rec.Err = err.Error()
		in.log.Warn("fault did not go as planned", "id", f.ID, "kind", f.Kind, "err", err)
	}
	return rec
}

// storeIsZooKeeper reports whether the members commit to ZooKeeper.
func (in *injector) storeIsZooKeeper() bool {
	return in.cfg.Topology.offsetsStorage() == storeZooKeeper
}

// memberRestart kills (SIGKILL) or interrupts (SIGINT) a member, waits for
// it to exit, and starts a new incarnation after f.Hold.
func (in *injector) memberRestart(ctx context.Context, f PlannedFault, rec *FaultRecord) error {
	sig, ending, wait := syscall.SIGKILL, "kill", 30*time.Second
	if f.Kind == MemberLeave {
		sig, ending, wait = syscall.SIGINT, "leave", in.cfg.ExitTimeout
	}
	rec.Start = time.Now().UnixNano()
	p, err := in.members.signal(in.members.get(f.Member), sig, ending, f.ID)
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	if sig == syscall.SIGKILL {
		rec.KillAt = rec.Start
	}
	if p != nil {
		rec.Inc = p.Inc
		select {
		case <-p.done:
		case <-time.After(wait):
			errs = append(errs, fmt.Errorf("member %s did not exit within %v of %v", p.Key(), wait, sig))
			in.members.killRemainingOf(p)
		}
	}
	sleep(ctx, f.Hold)
	rec.End = time.Now().UnixNano()
	if err := in.startMember(f.Member); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// memberStop freezes a member (two for OverlapStopTwo) for f.Hold. The
// recorded window is the freeze: it starts once SIGSTOP is sent to every
// target and ends before SIGCONT is.
func (in *injector) memberStop(ctx context.Context, f PlannedFault, rec *FaultRecord) error {
	slots := []int{f.Member}
	if f.Kind == OverlapStopTwo {
		slots = append(slots, f.Member2)
	}
	var stopped []*process
	var errs []error
	for i, slot := range slots {
		p, err := in.members.signal(in.members.get(slot), syscall.SIGSTOP, "", f.ID)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		stopped = append(stopped, p)
		if i == 0 {
			rec.Inc = p.Inc
		} else {
			rec.Inc2 = p.Inc
		}
	}
	rec.Start = time.Now().UnixNano()
	sleep(ctx, f.Hold)
	rec.End = time.Now().UnixNano()
	for _, p := range stopped {
		if err := syscall.Kill(p.PID, syscall.SIGCONT); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("SIGCONT to member %s: %w", p.Key(), err))
		}
	}
	return errors.Join(errs...)
}

// staticReplace starts a second process for f.Member's slot, with the same
// group.instance.id, while the first still runs; after f.Hold the first
// is killed (even Pick) or interrupted (odd Pick).
func (in *injector) staticReplace(ctx context.Context, f PlannedFault, rec *FaultRecord) error {
	old := in.members.get(f.Member)
	if old == nil || old.ended() {
		return fmt.Errorf("member slot %d is not running", f.Member)
	}
	rec.Inc = old.Inc
	p, err := in.members.start(f.Member, true)
	if err != nil {
		return err
	}
	in.tracker.follow(p.Key(), filepath.Join(in.members.dir, p.Log))
	sleep(ctx, f.Hold)
	sig, ending, wait := syscall.SIGKILL, "kill", 30*time.Second
	if f.Pick%2 == 1 {
		sig, ending, wait = syscall.SIGINT, "leave", in.cfg.ExitTimeout
	}
	rec.Detail = fmt.Sprintf("%s replaced by %s, then %s", old.Key(), p.Key(), sig)
	at := time.Now().UnixNano()
	if _, err := in.members.signal(old, sig, ending, f.ID); err != nil {
		return err
	}
	if sig == syscall.SIGKILL {
		rec.KillAt = at
	}
	select {
	case <-old.done:
	case <-time.After(wait):
		in.members.killRemainingOf(old)
		return fmt.Errorf("member %s did not exit within %v of %v", old.Key(), wait, sig)
	}
	return nil
}

// pause freezes a JVM for hold; it is thawed even when ctx ends.
func (in *injector) pause(ctx context.Context, hold time.Duration, pause, resume func() error) error {
	if err := pause(); err != nil {
		return err
	}
	sleep(ctx, hold)
	return resume()
}

// restart kills a JVM and starts it again after hold.
func (in *injector) restart(ctx context.Context, hold time.Duration, kill func() error, start func(context.Context) error) error {
	if err := kill(); err != nil {
		return err
	}
	sleep(ctx, hold)
	sctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	return start(sctx)
}

// restartBroker starts a killed broker again. A broker restarted before
// its previous ZooKeeper session has expired finds its old registration and
// exits; it is started again until it registers.
func (in *injector) restartBroker(ctx context.Context, id int) (attempts int, err error) {
	var errs []error
	for attempts = 1; attempts <= 10; attempts++ {
		err := in.cluster.RestartBroker(ctx, id)
		if err == nil {
			return attempts, nil
		}
		errs = append(errs, err)
		if in.cluster.BrokerRunning(id) || ctx.Err() != nil {
			break // running but not answering: give up
		}
		sleep(ctx, 2*time.Second)
	}
	return attempts, errors.Join(errs...)
}

// pickPartitions chooses n distinct partitions of the run's topics, each
// partition equally likely.
func (in *injector) pickPartitions(rng *rand.Rand, n int) []topicPartition {
	var all []topicPartition
	for _, t := range in.topicList() {
		for p := range t.Partitions {
			all = append(all, topicPartition{t.Name, int32(p)})
		}
	}
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	return all[:min(n, len(all))]
}

// moveLeaders moves the leader of f.Count partitions to another in-sync
// replica.
func (in *injector) moveLeaders(ctx context.Context, f PlannedFault) (string, error) {
	rng := rand.New(rand.NewPCG(f.Pick, uint64(f.ID)))
	var moved []string
	var errs []error
	for _, tp := range in.pickPartitions(rng, f.Count) {
		st, err := in.cluster.ReadPartitionState(ctx, tp.Topic, tp.Partition)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var candidates []int
		for _, r := range st.ISR {
			if r != st.Leader {
				candidates = append(candidates, r)
			}
		}
		if len(candidates) == 0 {
			moved = append(moved, fmt.Sprintf("%s: no other in-sync replica (isr %v)", tp, st.ISR))
			continue
		}
		slices.Sort(candidates)
		to := candidates[rng.IntN(len(candidates))]
		err = retry(ctx, 20*time.Second, func(ctx context.Context) error {
			return in.cluster.MoveLeader(ctx, tp.Topic, tp.Partition, to)
		})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		moved = append(moved, fmt.Sprintf("%s: %d->%d", tp, st.Leader, to))
	}
	return strings.Join(moved, ", "), errors.Join(errs...)
}

// addPartitions adds f.Count partitions to one of the run's topics.
func (in *injector) addPartitions(ctx context.Context, f PlannedFault) (string, error) {
	rng := rand.New(rand.NewPCG(f.Pick, uint64(f.ID)))
	topics := in.topicList()
	t := topics[rng.IntN(len(topics))]
	total := t.Partitions + f.Count
	err := retry(ctx, time.Minute, func(ctx context.Context) error {
		// An attempt that failed late may have added them already.
		if replicas, err := in.cluster.PartitionReplicas(t.Name); err == nil && len(replicas) >= total {
			return nil
		}
		return in.cluster.AddPartitions(ctx, t.Name, int32(total))
	})
	if err != nil {
		return "", err
	}
	in.setPartitions(t.Name, total)
	detail := fmt.Sprintf("%s: %d -> %d partitions", t.Name, t.Partitions, total)
	return detail, in.producer.setTopic(t.Name, total)
}

// newTopic creates a topic that the wildcard members' whitelist matches.
func (in *injector) newTopic(ctx context.Context, f PlannedFault) (string, error) {
	name := fmt.Sprintf("%s.new%d", in.prefix, f.ID)
	err := retry(ctx, time.Minute, func(ctx context.Context) error {
		return in.cluster.CreateTopic(ctx, name, int32(f.Count), brokers)
	})
	if err != nil {
		return "", err
	}
	in.setPartitions(name, f.Count)
	detail := fmt.Sprintf("%s with %d partitions", name, f.Count)
	return detail, in.producer.setTopic(name, f.Count)
}

// retry runs an admin operation up to five times, each attempt bounded by
// timeout: right after a ZooKeeper or broker fault, the controller may
// refuse it for a few seconds.
func retry(ctx context.Context, timeout time.Duration, op func(context.Context) error) error {
	var errs []error
	for attempt := range 5 {
		if attempt > 0 {
			sleep(ctx, 2*time.Second)
		}
		actx, cancel := context.WithTimeout(ctx, timeout)
		err := op(actx)
		cancel()
		if err == nil {
			return nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return errors.Join(errs...)
}

func (in *injector) setPartitions(topic string, n int) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for i := range in.topics {
		if in.topics[i].Name == topic {
			in.topics[i].Partitions = n
			return
		}
	}
	in.topics = append(in.topics, topicInfo{Name: topic, Partitions: n})
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
