package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/zkconsumer/zkconsumer/internal/cmdhelp"
	"github.com/zkconsumer/zkconsumer/internal/groups"
	"github.com/zkconsumer/zkconsumer/internal/secure"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
)

// Exit codes.
const (
	exitOK    = 0
	exitError = 1 // the operation failed or was refused
	exitUsage = 2 // bad options
)

// run is the whole command: it parses args, runs the action and returns
// the exit code. Results go to stdout, errors and warnings to stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, fs, err := parseArgs(args)
	if o.Version && err == nil {
		fmt.Fprintln(stdout, cmdhelp.Version(toolName))
		return exitOK
	}
	if o.Help || errors.Is(err, flag.ErrHelp) {
		printHelp(stdout, fs)
		return exitOK
	}
	if len(args) == 0 {
		printHelp(stderr, fs)
		return exitUsage
	}
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\nRun with --help for the options.\n", err)
		return exitUsage
	}
	if err := dispatch(ctx, o, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "Error: %s\n", err.Error())
		return exitError
	}
	return exitOK
}

// dispatch runs the one action of o.
func dispatch(ctx context.Context, o *options, stdout, stderr io.Writer) error {
	settings, sec, err := loadCommandConfig(o.CommandConfig, stderr)
	if err != nil {
		return err
	}
	if o.DeleteOffsets && o.BootstrapServer != "" {
		// A group coordinated by Kafka: no ZooKeeper.
		c := &command{o: o, sec: sec, stdout: stdout, stderr: stderr}
		return c.deleteOffsets(ctx)
	}
	zk, err := groups.OpenZooKeeper(ctx, o.ZooKeeper, o.Timeout, settings)
	if err != nil {
		return err
	}
	defer zk.Close()
	c := &command{o: o, zk: zk, sec: sec, stdout: stdout, stderr: stderr}
	switch {
	case o.List:
		return c.list(ctx)
	case o.Describe:
		return c.describe(ctx)
	case o.Delete:
		return c.delete(ctx)
	case o.DeleteOffsets:
		return c.deleteOffsets(ctx)
	case o.ResetOffsets:
		return c.resetOffsets(ctx)
	case o.Export:
		return c.export(ctx)
	case o.MigrateToKafka:
		return c.migrateToKafka(ctx)
	}
	return errors.New("no action")
}

// command carries what every action needs.
type command struct {
	o              *options
	zk             *zksession.Session // nil for a group coordinated by Kafka
	sec            *secure.Client     // --command-config
	stdout, stderr io.Writer
}

// step returns a context bounding one network step by --timeout.
func (c *command) step(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.o.Timeout)
}

// warnf writes a warning to stderr.
func (c *command) warnf(format string, args ...any) {
	fmt.Fprintf(c.stderr, "Warning: %s\n", fmt.Sprintf(format, args...))
}
