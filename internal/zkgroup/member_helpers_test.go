package zkgroup

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/strategyname"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
	"github.com/zkconsumer/zkconsumer/internal/topicfilter"
	"github.com/zkconsumer/zkconsumer/internal/zkassign"
	"github.com/zkconsumer/zkconsumer/internal/zkbrokers"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

const childMemberEnv = "ZKCONSUMER_TEST_CHILD_MEMBER"

// childSpec is what a member in another OS process runs.
type childSpec struct {
	ZKConnect  string         `json:"zk"`
	Group      string         `json:"group"`
	ConsumerID string         `json:"consumer_id"`
	Topics     map[string]int `json:"topics"`
	Strategy   string         `json:"strategy"`
}

// runChildMember is the body of a member process started by startChild: it
// runs until its standard input closes (graceful leave) or it is killed.
func runChildMember() int {
	var spec childSpec
	if _, err := testcluster.SelfSpec(childMemberEnv, &spec); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx := context.Background()
	s, err := zksession.Dial(ctx, zksession.SessionConfig{Connect: spec.ZKConnect, SessionTimeout: 4 * time.Second, ConnectionTimeout: 20 * time.Second})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer s.Close()
	a, err := zkassign.NewAssignor(spec.Strategy)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	m, err := NewMember(Session(s), MemberConfig{Group: spec.Group, ConsumerID: spec.ConsumerID, Subscription: StaticSubscription(spec.Topics),
		Assignor: a, MaxRetries: 10, Backoff: time.Second, SessionTimeout: 4 * time.Second, Handler: &recorder{}, Logger: testLogger()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := m.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Println("started")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // until the parent closes stdin
	if err := m.Close(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// child is a member running in another OS process.
type child struct {
	cmd   *exec.Cmd
	stdin interface{ Close() error }
	id    string
}

func startChild(t *testing.T, spec childSpec) *child {
	t.Helper()
	p := testcluster.StartSelf(t, childMemberEnv, spec)
	stdout := p.Stdout
	c := &child{cmd: p.Cmd, stdin: p.Stdin, id: spec.ConsumerID}
	t.Cleanup(func() {
		_ = c.cmd.Process.Kill()
		_ = c.cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err, "child member did not start")
	require.Equal(t, "started\n", line)
	return c
}

// leave makes the child close its member and exit.
func (c *child) leave(t *testing.T) {
	require.NoError(t, c.stdin.Close())
	require.NoError(t, c.cmd.Wait())
}

// kill ends the child with SIGKILL: its session lingers until it times out.
func (c *child) kill(t *testing.T) {
	require.NoError(t, c.cmd.Process.Signal(syscall.SIGKILL))
	_ = c.cmd.Wait()
}

// recorder is a Handler that remembers what its member owns.
type recorder struct {
	mu      sync.Mutex
	owned   map[zkutil.TopicPartition]zkutil.ConsumerThreadID
	gens    int
	revokes int
	lost    int
	lostAt  time.Time // the first revoke with lost=true
	session int64     // the session of the last generation
	history []assignedAt
	ended   []revoked
}

// revoked is one generation end.
type revoked struct {
	gen     int
	session int64
	lost    bool
}

// assignedAt is one generation start: when, and how many partitions.
type assignedAt struct {
	at    time.Time
	owned int
}

func (r *recorder) Revoke(_ context.Context, gen *Generation, lost bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ended = append(r.ended, revoked{gen: gen.ID, session: gen.SessionID, lost: lost})
	r.owned = nil
	r.revokes++
	if lost {
		r.lost++
		if r.lostAt.IsZero() {
			r.lostAt = time.Now()
		}
	}
	return nil
}

func (r *recorder) Assign(_ context.Context, gen *Generation) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.owned = maps.Clone(gen.Owned)
	r.session = gen.SessionID
	r.gens++
	r.history = append(r.history, assignedAt{at: time.Now(), owned: len(gen.Owned)})
	return nil
}

func (r *recorder) snapshot() map[zkutil.TopicPartition]zkutil.ConsumerThreadID {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.owned)
}

// testMember is an in-process member with its own ZooKeeper session.
type testMember struct {
	*Member
	id      string
	session *zksession.Session
	rec     *recorder
	tap     *testcluster.SessionTap
	errs    chan error
}

type memberOpts struct {
	connect  string // ZooKeeper connect string; the cluster's by default
	strategy string
	topics   map[string]int
	filter   *topicfilter.Filter
	streams  int
}

func startMember(t *testing.T, c *testcluster.Cluster, group, id string, o memberOpts) *testMember {
	t.Helper()
	ctx := context.Background()
	tap := &testcluster.SessionTap{}
	if o.connect == "" {
		o.connect = c.ZKConnect()
	}
	s, err := zksession.Dial(ctx, zksession.SessionConfig{Connect: o.connect, SessionTimeout: 4 * time.Second,
		ConnectionTimeout: 20 * time.Second, Dialer: tap.Dial})
	require.NoError(t, err)
	if o.strategy == "" {
		o.strategy = strategyname.Range
	}
	a, err := zkassign.NewAssignor(o.strategy)
	require.NoError(t, err)
	sub := StaticSubscription(o.topics)
	if o.filter != nil {
		sub = WildcardSubscription(o.filter, o.streams)
	}
	tm := &testMember{id: id, session: s, rec: &recorder{}, tap: tap, errs: make(chan error, 100)}
	m, err := NewMember(Session(s), MemberConfig{Group: group, ConsumerID: id, Subscription: sub, ExcludeInternalTopics: true,
		Assignor: a, MaxRetries: 10, Backoff: time.Second, SessionTimeout: 4 * time.Second,
		Handler: tm.rec, Logger: testLogger(), OnError: func(err error) {
			select {
			case tm.errs <- err:
			default:
			}
		}})
	require.NoError(t, err)
	tm.Member = m
	require.NoError(t, m.Start(ctx))
	t.Cleanup(func() { tm.stop(t) })
	return tm
}

func (tm *testMember) stop(t *testing.T) {
	if tm.session == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, tm.Close(ctx))
	require.NoError(t, tm.session.Close())
	tm.session = nil
}

// ownersOf reads every owner node of the group: partition -> owner value.
func ownersOf(ctx context.Context, s *zksession.Session, group string, topics []string) (map[zkutil.TopicPartition]string, error) {
	out := map[zkutil.TopicPartition]string{}
	for _, topic := range topics {
		parts, err := s.Children(ctx, zkutil.OwnersTopicPath(group, topic))
		if errors.Is(err, zksession.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, p := range parts {
			var n int32
			if _, err := fmt.Sscan(p, &n); err != nil {
				return nil, err
			}
			data, _, err := s.Get(ctx, zkutil.OwnerPath(group, topic, n))
			if errors.Is(err, zksession.ErrNoNode) {
				continue
			}
			if err != nil {
				return nil, err
			}
			out[zkutil.TopicPartition{Topic: topic, Partition: n}] = string(data)
		}
	}
	return out, nil
}

// expectedOwners computes the assignment the assignor predicts for the
// group as registered now, as owner values.
func expectedOwners(ctx context.Context, s *zksession.Session, group, anyMember string, sub Subscription, a zkassign.Assignor) (map[zkutil.TopicPartition]string, []string, error) {
	view, err := readGroup(ctx, s, group, anyMember, sub, true, a.Name())
	if err != nil {
		return nil, nil, err
	}
	assignment, err := a.Assign(view.ctx)
	if err != nil {
		return nil, nil, err
	}
	out := map[zkutil.TopicPartition]string{}
	for _, owned := range assignment {
		for tp, th := range owned {
			out[tp] = th.String()
		}
	}
	return out, view.ctx.Consumers, nil
}

// waitConverged waits until the owner nodes of the group equal what the
// assignor predicts for its current members, every partition of topics is
// owned, and each in-process member's handler owns exactly its share.
// members[0] must be subscribed to exactly topics.
func waitConverged(t *testing.T, observer *zksession.Session, group string, topics map[string]int, strategy string, wantMembers int, members ...*testMember) map[zkutil.TopicPartition]string {
	t.Helper()
	a, err := zkassign.NewAssignor(strategy)
	require.NoError(t, err)
	ctx := context.Background()
	var last string
	var owners map[zkutil.TopicPartition]string
	ok := testwait.Until(90*time.Second, func() bool {
		ids, err := observer.Children(ctx, zkutil.ConsumerIDsPath(group))
		if err != nil || len(ids) != wantMembers {
			last = fmt.Sprintf("members %v (want %d), err %v", ids, wantMembers, err)
			return false
		}
		// members[0] subscribes to topics; the others' subscriptions
		// are read from their registrations.
		want, consumers, err := expectedOwners(ctx, observer, group, members[0].id, StaticSubscription(topics), a)
		if err != nil {
			last = err.Error()
			return false
		}
		owners, err = ownersOf(ctx, observer, group, slices.Collect(maps.Keys(topics)))
		if err != nil {
			last = err.Error()
			return false
		}
		total := 0
		for topic := range topics {
			data, _, err := observer.Get(ctx, zkbrokers.TopicPath(topic))
			if err != nil {
				last = err.Error()
				return false
			}
			parts, _ := zkbrokers.DecodeTopicPartitions(topic, "", data)
			total += len(parts)
		}
		if len(owners) != total || !maps.Equal(owners, want) {
			last = fmt.Sprintf("members %v: owners %v, want %v", consumers, owners, want)
			return false
		}
		for _, m := range members {
			got := m.rec.snapshot()
			for tp, th := range got {
				if want[tp] != th.String() {
					last = fmt.Sprintf("member %s holds %s as %s, want %s", m.id, tp, th, want[tp])
					return false
				}
			}
			for tp, owner := range want {
				if strings.HasPrefix(owner, m.id+"-") {
					if _, ok := got[tp]; !ok {
						last = fmt.Sprintf("member %s does not hold %s", m.id, tp)
						return false
					}
				}
			}
		}
		return true
	})
	require.True(t, ok, "group %s did not converge: %s", group, last)
	return owners
}

func dialObserver(t *testing.T, c *testcluster.Cluster) *zksession.Session {
	t.Helper()
	s, err := zksession.Dial(context.Background(), zksession.SessionConfig{Connect: c.ZKConnect(), SessionTimeout: 10 * time.Second, ConnectionTimeout: 20 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// testLogger logs members to stderr when ZKCONSUMER_TEST_LOG is set.
func testLogger() *slog.Logger {
	if os.Getenv("ZKCONSUMER_TEST_LOG") == "" {
		return nil
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
