package chaos

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/coordinator"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// TestObserveCommitsOfRealStores writes committed offsets to a real
// three-server ZooKeeper ensemble, with a follower killed and restarted in
// the middle (its log then misses commits the others have), and to a real
// __consumer_offsets, then reads them back the way a chaos run does: every
// commit is found, in order, with its writer, and the last one matches the
// committed offset the store serves.
func TestObserveCommitsOfRealStores(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: skipped by -short")
	}
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "cluster")
	c := testcluster.Private(t, testcluster.Options{
		Brokers: 1, ZooKeeperServers: 3, Dir: dir,
		BrokerProperties: map[string]string{"offsets.topic.segment.bytes": "1073741824"},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const group = "g-observe"

	// ZooKeeper: an owner with its registration and owner node commits 1..n;
	// a follower is killed half-way and restarted; another session, which
	// owns nothing, commits 7 at the end.
	dial := func() *zksession.Session {
		s, err := zksession.Dial(ctx, zksession.SessionConfig{Connect: c.ZKConnect(), SessionTimeout: 10 * time.Second, ConnectionTimeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	owner, other := dial(), dial()
	defer owner.Close()
	defer other.Close()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(owner.EnsurePath(ctx, zkutil.ConsumerIDsPath(group)))
	must(owner.CreateEphemeral(ctx, zkutil.ConsumerIDPath(group, "c1"), []byte(`{"version":1}`)))
	must(owner.EnsurePath(ctx, zkutil.OwnersTopicPath(group, "t")))
	must(owner.CreateEphemeral(ctx, zkutil.OwnerPath(group, "t", 0), []byte("c1-0")))
	lctx, lcancel := context.WithTimeout(ctx, time.Minute)
	leader, err := c.ZooKeeperLeader(lctx)
	lcancel()
	must(err)
	follower := (leader + 1) % 3
	const n = 60
	for i := 1; i <= n; i++ {
		if i == n/3 {
			must(c.KillZooKeeperServer(follower))
		}
		if i == 2*n/3 {
			must(c.RestartZooKeeperServer(ctx, follower))
		}
		must(owner.SetOrCreate(ctx, zkutil.OffsetPath(group, "t", 0), zkutil.EncodeOffset(int64(i))))
	}
	must(other.SetOrCreate(ctx, zkutil.OffsetPath(group, "t", 0), zkutil.EncodeOffset(7)))

	// Kafka: commits from outside the group, one partition going back.
	must(c.CreateTopic(ctx, "observe", 2, 1))
	kc := coordinator.New(group, func() (sarama.Client, error) {
		return sarama.NewClient(c.BrokerAddrs(), testcluster.SaramaConfig())
	}, 5, 500*time.Millisecond)
	defer kc.Close()
	var want []int64
	for i := int64(1); i <= 30; i++ {
		off := 10 * i
		if i == 20 {
			off = 5
		}
		want = append(want, off)
		must(kc.Commit(ctx, map[zkutil.TopicPartition]int64{{Topic: "observe", Partition: int32(i % 2)}: off}))
	}
	kafkaCommits, kobs, err := readKafkaCommits(ctx, c.BrokerAddrs(), group, testcluster.SaramaConfig())
	must(err)
	if len(kobs.Problems) != 0 || len(kafkaCommits) != len(want) {
		t.Fatalf("Kafka: %d commits (want %d), problems %v", len(kafkaCommits), len(want), kobs.Problems)
	}
	for i, cm := range kafkaCommits {
		if cm.Offset != want[i] || cm.Partition != int32((i+1)%2) || cm.Topic != "observe" || cm.Time == 0 {
			t.Fatalf("Kafka commit %d: %+v, want offset %d", i, cm, want[i])
		}
	}

	// Stop everything, then read the ensemble's logs.
	owner.Close()
	other.Close()
	must(c.Stop())
	dirs, err := filepath.Glob(filepath.Join(dir, "zookeeper*", "data", "version-2"))
	must(err)
	if len(dirs) != 3 {
		t.Fatalf("log directories %v, want three", dirs)
	}
	commits, obs, err := readZKCommits(dirs, testcluster.DefaultChroot, group)
	must(err)
	obs.Final = map[string]int64{"t-0": 7}
	obs.checkFinal(commits)
	if len(obs.Problems) != 0 {
		t.Fatalf("problems: %v", obs.Problems)
	}
	if len(commits) != n+1 {
		t.Fatalf("%d commits, want %d", len(commits), n+1)
	}
	for i, cm := range commits[:n] {
		if cm.Offset != int64(i+1) || cm.Consumer != "c1" || cm.NotOwner != "" {
			t.Fatalf("commit %d: %+v", i, cm)
		}
		if i > 0 && cm.Order <= commits[i-1].Order {
			t.Fatalf("commit %d out of order: %+v after %+v", i, cm, commits[i-1])
		}
	}
	last := commits[n]
	if last.Offset != 7 || last.Consumer != "" || last.NotOwner == "" {
		t.Fatalf("last commit %+v: the other session held no owner node", last)
	}
	// The killed follower's own log misses what was committed while it was
	// down: only the merge of the majority finds everything.
	for _, d := range dirs {
		txns, _, err := ReadZKTxnLogDir(d)
		must(err)
		got := len(zkCommits(txns, testcluster.DefaultChroot, group))
		t.Logf("%s: %d commits in its own log", d, got)
	}
}
