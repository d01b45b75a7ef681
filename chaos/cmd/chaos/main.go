// Command chaos runs the consumer's fault-injection suite (make chaos): a
// private cluster (a three-server ZooKeeper ensemble and three brokers, or
// three KRaft nodes for kafka-consumer), a
// group of member processes, a producer and a seeded schedule of faults,
// then a verdict on at-least-once delivery, single ownership and committed
// offsets. See package chaos (the directory above) for the topologies and definitions.
//
//	chaos [flags]               the full run of every topology, one after another
//	chaos -topology T [flags]   the full run of topology T (ensemble, roundrobin, kafka, sticky, kafka-cooperative, kafka-consumer)
//	chaos verify -dir DIR       verify the logs of an earlier run again
//	chaos member                a member process (started by the driver)
//
// It exits with 0 when every run passes, 1 when one fails, 2 when one could
// not be carried out.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/zkconsumer/zkconsumer/chaos"
)

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "member":
			os.Exit(chaos.MemberMain())
		case "verify":
			os.Exit(verify(os.Args[2:]))
		}
	}
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	def := chaos.DefaultConfig(chaos.TopologyEnsemble)
	short := chaos.ShortConfig()
	fs := flag.NewFlagSet("chaos", flag.ExitOnError)
	topology := fs.String("topology", "all", fmt.Sprintf("topology to run: all (one after another) or one of %v", chaos.Topologies))
	seed := fs.Int64("seed", -1, fmt.Sprintf("seed of the fault schedule (default %d; short %d); 0 picks one from the clock", def.Seed, short.Seed))
	shortRun := fs.Bool("short", false, "start from the short run of the Go test instead of the full run")
	messages := fs.Int("messages", 0, fmt.Sprintf("messages to produce (default %d; short %d)", def.Messages, short.Messages))
	members := fs.Int("members", 0, fmt.Sprintf("member processes (default %d)", def.Members))
	faults := fs.Int("faults", -1, fmt.Sprintf("faults to inject (default %d; short %d)", def.Faults, short.Faults))
	duration := fs.Duration("duration", 0, fmt.Sprintf("length of the fault phase (default %v; short %v)", def.Duration, short.Duration))
	session := fs.Duration("session-timeout", 0, fmt.Sprintf("members' session timeout (default %v)", def.SessionTimeout))
	commit := fs.Duration("commit-interval", 0, fmt.Sprintf("members' auto.commit.interval.ms (default %v)", def.CommitInterval))
	partitions := fs.Int("partitions", 0, fmt.Sprintf("partitions of the main topic (default %d)", def.Partitions))
	size := fs.Int("message-size", 0, fmt.Sprintf("bytes per message (default %d)", def.MessageSize))
	zkServers := fs.Int("zk-servers", 0, fmt.Sprintf("ZooKeeper servers, 3 or 1 (default %d)", def.ZooKeeperServers))
	kinds := fs.String("kinds", "", "comma-separated fault kinds to use (default: the topology's): "+kindList())
	drain := fs.Duration("drain-timeout", 0, fmt.Sprintf("bound on the final wait for every acknowledged message (default %v)", def.DrainTimeout))
	keep := fs.Bool("keep", false, "keep the run directory even when the run passes")
	dir := fs.String("dir", "", "run directory (default: a new temporary directory); with several topologies, one subdirectory each")
	verbose := fs.Bool("v", false, "debug logging")
	_ = fs.Parse(args)
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "chaos: unexpected arguments %q\n", fs.Args())
		return 2
	}
	topologies := chaos.Topologies
	if *topology != "all" {
		t, err := chaos.ParseTopology(*topology)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		topologies = []chaos.Topology{t}
	}
	pickedSeed := int64(0)
	if *seed == 0 {
		pickedSeed = 1 + time.Now().UnixNano()%1_000_000
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	code := 0
	var summary []string
	for _, t := range topologies {
		cfg := chaos.DefaultConfig(t)
		if *shortRun {
			cfg = chaos.ShortConfigOf(t)
		}
		switch {
		case pickedSeed != 0:
			cfg.Seed = pickedSeed
		case *seed > 0:
			cfg.Seed = *seed
		}
		setInt(&cfg.Messages, *messages)
		setInt(&cfg.Members, *members)
		setInt(&cfg.Partitions, *partitions)
		setInt(&cfg.MessageSize, *size)
		setInt(&cfg.ZooKeeperServers, *zkServers)
		if *faults >= 0 {
			cfg.Faults = *faults
		}
		setDur(&cfg.Duration, *duration)
		setDur(&cfg.SessionTimeout, *session)
		setDur(&cfg.CommitInterval, *commit)
		setDur(&cfg.DrainTimeout, *drain)
		if *kinds != "" {
			ks, err := chaos.ParseKinds(strings.Split(*kinds, ","))
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 2
			}
			cfg.Kinds = ks
		}
		cfg.Keep, cfg.Dir = *keep, *dir
		if *dir != "" && len(topologies) > 1 {
			cfg.Dir = filepath.Join(*dir, string(t))
		}
		cfg.Logger = logger.With("topology", t)
		cfg.MemberCommand = []string{exe, "member"}
		cfg.CommandLine = strings.Join(os.Args, " ")
		if len(topologies) > 1 {
			cfg.CommandLine += " (topology " + string(t) + ")"
		}
		if pickedSeed != 0 {
			cfg.CommandLine += fmt.Sprintf(" (seed picked: rerun with -seed %d)", cfg.Seed)
		}
		res, err := chaos.Run(ctx, cfg)
		if err != nil {
			fmt.Fprintf(os.Stderr, "chaos: %s: %v\n", t, err)
			summary = append(summary, fmt.Sprintf("%-10s could not be carried out: %v", t, err))
			code = 2
			if ctx.Err() != nil {
				break
			}
			continue
		}
		res.Report(os.Stdout)
		fmt.Println()
		verdict := "PASS"
		if !res.Passed() {
			verdict = "FAIL: " + strings.Join(res.Failures(), "; ")
			code = max(code, 1)
		}
		summary = append(summary, fmt.Sprintf("%-10s seed %d, logs %s: %s", t, cfg.Seed, res.Dir, verdict))
	}
	if len(topologies) > 1 {
		fmt.Println("chaos summary:")
		for _, s := range summary {
			fmt.Println("  " + s)
		}
	}
	return code
}

func verify(args []string) int {
	fs := flag.NewFlagSet("chaos verify", flag.ExitOnError)
	dir := fs.String("dir", "", "run directory of an earlier run (kept with -keep, or failed)")
	list := fs.Int("list", 25, "longest detail list to print")
	_ = fs.Parse(args)
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "chaos verify: -dir is required")
		return 2
	}
	res, err := chaos.Verify(*dir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "chaos verify: %v\n", err)
		return 2
	}
	res.ListLimit = *list
	res.Report(os.Stdout)
	if !res.Passed() {
		return 1
	}
	return 0
}

func kindList() string {
	var s []string
	for _, k := range chaos.AllKinds {
		s = append(s, string(k))
	}
	return strings.Join(s, ",")
}

func setInt(dst *int, v int) {
	if v > 0 {
		*dst = v
	}
}

func setDur(dst *time.Duration, v time.Duration) {
	if v > 0 {
		*dst = v
	}
}
