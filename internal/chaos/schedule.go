package chaos

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// FaultKind names one kind of fault.
type FaultKind string

// The faults the driver can inject.
const (
	// MemberKill kills a member with SIGKILL and restarts it after Hold.
	MemberKill FaultKind = "member-kill"
	// MemberStop freezes a member with SIGSTOP for Hold (longer than the
	// session timeout), then resumes it with SIGCONT.
	MemberStop FaultKind = "member-stop"
	// MemberLeave interrupts a member with SIGINT, waits for its clean
	// exit, and restarts it after Hold.
	MemberLeave FaultKind = "member-leave"
	// ZKPauseShort freezes ZooKeeper for about 3 s.
	ZKPauseShort FaultKind = "zk-pause-short"
	// ZKPauseLong freezes ZooKeeper for longer than the session timeout.
	ZKPauseLong FaultKind = "zk-pause-long"
	// ZKRestart kills ZooKeeper with SIGKILL and restarts it after Hold.
	ZKRestart FaultKind = "zk-restart"
	// BrokerKill kills a broker with SIGKILL and restarts it after Hold.
	BrokerKill FaultKind = "broker-kill"
	// BrokerPause freezes a broker for Hold.
	BrokerPause FaultKind = "broker-pause"
	// LeaderMove moves the leaders of Count partitions to other replicas.
	LeaderMove FaultKind = "leader-move"
	// AddPartitions adds Count partitions to a topic.
	AddPartitions FaultKind = "add-partitions"
	// NewTopic creates a topic of Count partitions that the wildcard
	// members' whitelist matches.
	NewTopic FaultKind = "new-topic"
)

// AllKinds lists every fault kind in report order.
var AllKinds = []FaultKind{
	MemberKill, MemberStop, MemberLeave,
	ZKPauseShort, ZKPauseLong, ZKRestart,
	BrokerKill, BrokerPause,
	LeaderMove, AddPartitions, NewTopic,
}

// weights make member faults the most frequent; cluster-wide faults, which
// disturb every member at once, are rarer.
var weights = map[FaultKind]int{
	MemberKill: 14, MemberStop: 12, MemberLeave: 12,
	ZKPauseShort: 6, ZKPauseLong: 5, ZKRestart: 5,
	BrokerKill: 8, BrokerPause: 8,
	LeaderMove: 10, AddPartitions: 5, NewTopic: 4,
}

func (k FaultKind) valid() bool { return slices.Contains(AllKinds, k) }

// memberFault reports whether k targets a member process.
func (k FaultKind) memberFault() bool {
	return k == MemberKill || k == MemberStop || k == MemberLeave
}

// cutsZooKeeper reports whether k can cut every member off ZooKeeper.
func (k FaultKind) cutsZooKeeper() bool {
	return k == ZKPauseShort || k == ZKPauseLong || k == ZKRestart
}

// ParseKinds parses a comma-separated list of fault kinds.
func ParseKinds(list []string) ([]FaultKind, error) {
	var out []FaultKind
	for _, s := range list {
		k := FaultKind(s)
		if !k.valid() {
			return nil, fmt.Errorf("chaos: unknown fault kind %q (known: %v)", s, AllKinds)
		}
		out = append(out, k)
	}
	return out, nil
}

// PlannedFault is one entry of the schedule.
type PlannedFault struct {
	// ID numbers the faults from 1 in schedule order.
	ID int `json:"id"`
	// Kind is what happens.
	Kind FaultKind `json:"kind"`
	// At is when the fault is due, from the start of the fault phase. A
	// fault starts no earlier than one second after the previous one ended.
	At time.Duration `json:"at"`
	// Member is the target slot of a member fault.
	Member int `json:"member,omitempty"`
	// Broker is the target broker id of a broker fault.
	Broker int `json:"broker,omitempty"`
	// Hold is how long the fault lasts: the pause, or the time the target
	// stays down before it is restarted.
	Hold time.Duration `json:"hold,omitempty"`
	// Count is the number of partitions moved, added or created.
	Count int `json:"count,omitempty"`
	// Pick drives the choices that depend on the state at run time
	// (which topic, which partitions, which replica).
	Pick uint64 `json:"pick"`
}

// Target describes what the fault acts on, for the report.
func (f PlannedFault) Target() string {
	switch {
	case f.Kind.memberFault():
		return fmt.Sprintf("member %d", f.Member)
	case f.Kind == BrokerKill || f.Kind == BrokerPause:
		return fmt.Sprintf("broker %d", f.Broker)
	case f.Kind.cutsZooKeeper():
		return "zookeeper"
	default:
		return fmt.Sprintf("%d partitions", f.Count)
	}
}

// brokers is the size of the chaos cluster.
const brokers = 3

// NewSchedule derives the fault schedule from cfg.Seed: which faults, in
// which order, when, against which target and for how long. It is a pure
// function of the seed and of cfg's Faults, Duration, Kinds, Members and
// SessionTimeout. When there are at least as many faults as kinds, every
// kind occurs at least once.
func NewSchedule(cfg Config) []PlannedFault {
	if cfg.Faults <= 0 {
		return nil
	}
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x5eed_c4a05))
	kinds := usableKinds(cfg)
	if len(kinds) == 0 {
		return nil
	}
	var seq []FaultKind
	if cfg.Faults >= len(kinds) {
		seq = append(seq, kinds...)
		for len(seq) < cfg.Faults {
			seq = append(seq, weightedPick(rng, kinds))
		}
	} else {
		pool := slices.Clone(kinds)
		for len(seq) < cfg.Faults {
			k := weightedPick(rng, pool)
			seq = append(seq, k)
			pool = slices.DeleteFunc(pool, func(x FaultKind) bool { return x == k })
		}
	}
	rng.Shuffle(len(seq), func(i, j int) { seq[i], seq[j] = seq[j], seq[i] })

	interval := cfg.Duration / time.Duration(cfg.Faults)
	out := make([]PlannedFault, len(seq))
	for i, k := range seq {
		f := PlannedFault{
			ID:   i + 1,
			Kind: k,
			At:   interval/4 + time.Duration(i)*interval + between(rng, 0, interval/2),
			Pick: rng.Uint64(),
		}
		switch k {
		case MemberKill, MemberLeave:
			f.Member = rng.IntN(cfg.Members)
			f.Hold = between(rng, 500*time.Millisecond, 3*time.Second)
		case MemberStop:
			f.Member = rng.IntN(cfg.Members)
			f.Hold = cfg.SessionTimeout*3/2 + between(rng, 0, time.Second)
		case ZKPauseShort:
			f.Hold = between(rng, 2500*time.Millisecond, 3500*time.Millisecond)
		case ZKPauseLong:
			base := max(10*time.Second, cfg.SessionTimeout*5/3)
			f.Hold = between(rng, base-500*time.Millisecond, base+500*time.Millisecond)
		case ZKRestart:
			f.Hold = between(rng, time.Second, 3*time.Second)
		case BrokerKill, BrokerPause:
			f.Broker = rng.IntN(brokers)
			f.Hold = between(rng, 2*time.Second, 6*time.Second)
		case LeaderMove:
			f.Count = 1 + rng.IntN(4)
		case AddPartitions:
			f.Count = 1 + rng.IntN(2)
		case NewTopic:
			f.Count = 2 + rng.IntN(3)
		}
		out[i] = f
	}
	return out
}

// usableKinds are the kinds of cfg that make sense for its group: a new
// topic needs a wildcard member to consume it.
func usableKinds(cfg Config) []FaultKind {
	kinds := cfg.Kinds
	if len(kinds) == 0 {
		kinds = AllKinds
	}
	hasWildcard := false
	for slot := range cfg.Members {
		hasWildcard = hasWildcard || wildcard(slot)
	}
	var out []FaultKind
	for _, k := range AllKinds { // a stable order, whatever the input order
		if slices.Contains(kinds, k) && (k != NewTopic || hasWildcard) {
			out = append(out, k)
		}
	}
	return out
}

func weightedPick(rng *rand.Rand, kinds []FaultKind) FaultKind {
	total := 0
	for _, k := range kinds {
		total += weights[k]
	}
	n := rng.IntN(total)
	for _, k := range kinds {
		if n < weights[k] {
			return k
		}
		n -= weights[k]
	}
	return kinds[len(kinds)-1]
}

// between returns a duration in [lo, hi).
func between(rng *rand.Rand, lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(rng.Int64N(int64(hi-lo)))
}
