// Command chaos runs the consumer's fault-injection suite (make chaos): a
// private three-broker cluster, a group of member processes, a producer
// and a seeded schedule of faults, then a verdict on at-least-once delivery
// and single ownership. See package internal/chaos for the definitions.
//
//	chaos [flags]               a run (defaults: the full run of make chaos)
//	chaos verify -dir DIR       verify the logs of an earlier run again
//	chaos member                a member process (started by the driver)
//
// It exits with 0 when the run passes, 1 when it fails, 2 when it could not
// be carried out.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/chaos"
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
	cfg := chaos.DefaultConfig()
	fs := flag.NewFlagSet("chaos", flag.ExitOnError)
	seed := fs.Int64("seed", -1, fmt.Sprintf("seed of the fault schedule (default %d; short %d); 0 picks one from the clock", cfg.Seed, chaos.ShortConfig().Seed))
	short := fs.Bool("short", false, "start from the short run of the Go test instead of the full run")
	messages := fs.Int("messages", 0, fmt.Sprintf("messages to produce (default %d; short %d)", cfg.Messages, chaos.ShortConfig().Messages))
	members := fs.Int("members", 0, fmt.Sprintf("member processes (default %d)", cfg.Members))
	faults := fs.Int("faults", -1, fmt.Sprintf("faults to inject (default %d; short %d)", cfg.Faults, chaos.ShortConfig().Faults))
	duration := fs.Duration("duration", 0, fmt.Sprintf("length of the fault phase (default %v; short %v)", cfg.Duration, chaos.ShortConfig().Duration))
	session := fs.Duration("session-timeout", 0, fmt.Sprintf("members' zookeeper.session.timeout.ms (default %v)", cfg.SessionTimeout))
	commit := fs.Duration("commit-interval", 0, fmt.Sprintf("members' auto.commit.interval.ms (default %v)", cfg.CommitInterval))
	partitions := fs.Int("partitions", 0, fmt.Sprintf("partitions of the main topic (default %d)", cfg.Partitions))
	size := fs.Int("message-size", 0, fmt.Sprintf("bytes per message (default %d)", cfg.MessageSize))
	kinds := fs.String("kinds", "", "comma-separated fault kinds to use (default all): "+kindList())
	drain := fs.Duration("drain-timeout", 0, fmt.Sprintf("bound on the final wait for every acknowledged message (default %v)", cfg.DrainTimeout))
	keep := fs.Bool("keep", false, "keep the run directory even when the run passes")
	dir := fs.String("dir", "", "run directory (default: a new temporary directory)")
	verbose := fs.Bool("v", false, "debug logging")
	_ = fs.Parse(args)
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "chaos: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if *short {
		cfg = chaos.ShortConfig()
	}
	if *seed >= 0 {
		cfg.Seed = *seed
	}
	if cfg.Seed == 0 {
		cfg.Seed = 1 + time.Now().UnixNano()%1_000_000
	}
	setInt(&cfg.Messages, *messages)
	setInt(&cfg.Members, *members)
	setInt(&cfg.Partitions, *partitions)
	setInt(&cfg.MessageSize, *size)
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
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	cfg.MemberCommand = []string{exe, "member"}
	cfg.CommandLine = strings.Join(os.Args, " ")
	if *seed == 0 {
		cfg.CommandLine += fmt.Sprintf(" (seed picked: rerun with -seed %d)", cfg.Seed)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := chaos.Run(ctx, cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "chaos: %v\n", err)
		return 2
	}
	res.Report(os.Stdout)
	if !res.Passed() {
		return 1
	}
	return 0
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
