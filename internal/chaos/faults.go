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

	"github.com/zkconsumer/zkconsumer/internal/testcluster"
)

// FaultRecord is a fault as it happened.
type FaultRecord struct {
	PlannedFault
	// Start and End bound the fault in Unix nanoseconds. For MemberStop
	// they are the freeze: from just after SIGSTOP to just before SIGCONT.
	// For MemberKill, Start is the kill and End the restart.
	Start int64 `json:"start"`
	End   int64 `json:"end"`
	// Inc is the incarnation of the target member the fault hit.
	Inc int `json:"inc,omitempty"`
	// Detail says what exactly was done (partitions moved, topic made).
	Detail string `json:"detail,omitempty"`
	// Err is set when the fault could not be carried out as planned.
	Err string `json:"err,omitempty"`
}

// TargetKey names the member incarnation a member fault hit.
func (r FaultRecord) TargetKey() string {
	if !r.Kind.memberFault() || r.Inc == 0 {
		return ""
	}
	return fmt.Sprintf("m%d.%d", r.Member, r.Inc)
}

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
	p, err := in.members.start(slot)
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
	case MemberStop:
		err = in.memberStop(ctx, f, &rec)
	case ZKPauseShort, ZKPauseLong:
		err = in.pause(ctx, f.Hold, in.cluster.PauseZooKeeper, in.cluster.ResumeZooKeeper)
	case ZKRestart:
		err = in.restart(ctx, f.Hold, in.cluster.KillZooKeeper, in.cluster.RestartZooKeeper)
	case BrokerKill:
		err = in.restart(ctx, f.Hold,
			func() error { return in.cluster.KillBroker(f.Broker) },
			func(ctx context.Context) error {
				attempts, err := in.restartBroker(ctx, f.Broker)
				if attempts > 1 {
					rec.Detail = fmt.Sprintf("restarted at attempt %d", attempts)
				}
				return err
			})
	case BrokerPause:
		err = in.pause(ctx, f.Hold,
			func() error { return in.cluster.PauseBroker(f.Broker) },
			func() error { return in.cluster.ResumeBroker(f.Broker) })
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

// memberRestart kills (SIGKILL) or interrupts (SIGINT) a member, waits for
// it to exit, and starts a new incarnation after f.Hold.
func (in *injector) memberRestart(ctx context.Context, f PlannedFault, rec *FaultRecord) error {
	sig, ending, wait := syscall.SIGKILL, "kill", 30*time.Second
	if f.Kind == MemberLeave {
		sig, ending, wait = syscall.SIGINT, "leave", in.cfg.ExitTimeout
	}
	rec.Start = time.Now().UnixNano()
	p, err := in.members.signal(f.Member, sig, ending, f.ID)
	var errs []error
	if err != nil {
		errs = append(errs, err)
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

// memberStop freezes a member for f.Hold. The recorded window is the
// freeze: it starts once SIGSTOP is sent and ends before SIGCONT is.
func (in *injector) memberStop(ctx context.Context, f PlannedFault, rec *FaultRecord) error {
	p, err := in.members.signal(f.Member, syscall.SIGSTOP, "", f.ID)
	if err != nil {
		return err
	}
	rec.Start = time.Now().UnixNano()
	rec.Inc = p.Inc
	sleep(ctx, f.Hold)
	rec.End = time.Now().UnixNano()
	if err := syscall.Kill(p.PID, syscall.SIGCONT); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("SIGCONT to member %s: %w", p.Key(), err)
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
