package chaos

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
)

func TestMain(m *testing.M) {
	if IsMemberProcess() {
		os.Exit(MemberMain())
	}
	testcluster.Main(m)
}

// TestChaosShort is the seeded short run (ShortConfig): nine faults of
// nine kinds, among them a member cut off ZooKeeper until its session
// expires and healed at once, a member cut off the brokers and a restart
// of the ensemble's leader, against a private three-server ZooKeeper
// ensemble and three brokers, with race-enabled member processes (this
// test binary started again). It fails on any loss, double ownership,
// committed-offset regression, unexplained duplicate, gap in the observed
// commits, panic, race, unclean exit, leak or final-owner mismatch, and
// logs the whole report.
//
// CHAOS_SHORT_TOPOLOGY=<topology> runs the same short run on another
// topology (ShortConfigOf), e.g.
//
//	CHAOS_SHORT_TOPOLOGY=sticky go test -count=1 -run TestChaosShort ./chaos/
//
// make test leaves it unset: the ensemble topology.
func TestChaosShort(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: skipped by -short")
	}
	t.Parallel()
	topology, commandLine := TopologyEnsemble, "go test -run TestChaosShort ./chaos/"
	if name := os.Getenv("CHAOS_SHORT_TOPOLOGY"); name != "" {
		var err error
		if topology, err = ParseTopology(name); err != nil {
			t.Fatalf("CHAOS_SHORT_TOPOLOGY: %v", err)
		}
		commandLine = "CHAOS_SHORT_TOPOLOGY=" + name + " " + commandLine
	}
	cfg := ShortConfigOf(topology)
	cfg.MemberCommand = []string{os.Args[0], "-test.run=^$"}
	cfg.CommandLine = commandLine
	cfg.Logger = slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	// A loaded two-core machine starts six JVMs and five race-enabled
	// members slowly; the run's own deadlines (settle, drain, exit) are in
	// ShortConfig.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatalf("the chaos run could not be carried out (it needs the Kafka jars and Java): %v", err)
	}
	var b strings.Builder
	res.Report(&b)
	t.Logf("\n%s", b.String())
	if f := res.Failures(); len(f) > 0 {
		t.Errorf("the consumer broke its promises under faults: %s", strings.Join(f, "; "))
	}
}

// testWriter sends log lines to t.Log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
