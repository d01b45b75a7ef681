// Command console-consumer prints messages of topics to standard output, as
// a member of a ZooKeeper-coordinated consumer group. It behaves like Kafka
// 1.1.1's old console consumer (kafka-console-consumer.sh --zookeeper ...)
// with the default formatter, and takes the same flags:
//
//	go run ./examples/console-consumer --zookeeper 127.0.0.1:2181/kafka --topic orders --from-beginning
//	go run ./examples/console-consumer --zookeeper 127.0.0.1:2181/kafka --whitelist 'orders|payments' \
//		--property print.key=true --property print.timestamp=true --group audit
//
// As in Kafka, --topic is a regex like --whitelist, internal topics are
// left out unless exclude.internal.topics=false, a group started with
// --from-beginning must not have offsets yet (--delete-consumer-offsets
// deletes them), and a group generated because none was given
// (console-consumer-<random>) is deleted from ZooKeeper on exit.
//
// It stops after --max-messages messages, after --timeout-ms without a
// message, or on SIGINT/SIGTERM; it then leaves the group, committing what
// it printed, and reports "Processed a total of N messages" on standard
// error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/zkconsumer/zkconsumer/connector"
	"github.com/zkconsumer/zkconsumer/stream"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// shutdownTimeout bounds leaving the group and deleting a generated one.
const shutdownTimeout = 30 * time.Second

// run is the whole program: it consumes as args say, prints messages on
// stdout and everything else on stderr, and returns the exit status: 0
// after a normal end (max messages, timeout, ctx cancelled by a signal) and
// for -h, 1 after an error.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	stderr = &syncWriter{w: stderr}
	fs := newFlagSet(stderr)
	o, err := parseOptions(fs, args)
	if err != nil {
		return fail(fs, stderr, err)
	}
	cfg, warnings, err := connector.ConfigFromProperties(o.props)
	for _, w := range warnings {
		fmt.Fprintln(stderr, "console-consumer: warning:", w)
	}
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		return fail(fs, stderr, err)
	}
	if err := checkZK(ctx, cfg, o); err != nil {
		return fail(fs, stderr, err)
	}
	c, err := connector.New(cfg)
	if err != nil {
		return fail(fs, stderr, err)
	}

	count := 0
	var errorsDone sync.WaitGroup
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		if err := c.Shutdown(sctx); err != nil {
			fmt.Fprintln(stderr, "console-consumer: shutdown:", err)
		}
		errorsDone.Wait()
		fmt.Fprintf(stderr, "Processed a total of %d messages\n", count)
		if !o.groupPassed {
			if err := deleteGroup(sctx, cfg); err != nil {
				fmt.Fprintln(stderr, "console-consumer: delete generated group:", err)
			}
		}
	}()
	errorsDone.Go(func() {
		for err := range c.Errors() { // closed by Shutdown
			fmt.Fprintln(stderr, "console-consumer:", err)
		}
	})
	streams, err := c.CreateMessageStreamsByFilter(ctx, o.filter, 1)
	if err != nil {
		if ctx.Err() != nil {
			return 0 // interrupted while joining
		}
		return fail(fs, stderr, err)
	}
	s := streams[0]
	var buf []byte
	for o.maxMessages == -1 || count < o.maxMessages {
		msg, err := s.Next(ctx)
		switch {
		case err == nil:
		case errors.Is(err, stream.ErrConsumerTimeout),
			errors.Is(err, stream.ErrShutdown),
			ctx.Err() != nil && errors.Is(err, ctx.Err()):
			return 0
		default:
			// Kafka's old console consumer stops at the first error,
			// a partition's included.
			fmt.Fprintln(stderr, "console-consumer: Error processing message, terminating consumer process:", err)
			return 1
		}
		count++
		if buf, err = o.format.write(stdout, buf, msg); err != nil {
			fmt.Fprintln(stderr, "Unable to write to standard out, closing consumer.")
			return 1
		}
		s.MarkConsumed(msg) // printed counts as processed
	}
	return 0
}

// fail reports err on stderr, with the usage for command-line mistakes as
// Kafka does, and returns the exit status.
func fail(fs *flag.FlagSet, stderr io.Writer, err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	var ue *usageError
	var pe *flagParseError
	switch {
	case errors.As(err, &pe):
		// The flag package has printed the error and the usage.
	case errors.As(err, &ue):
		fmt.Fprintln(stderr, "console-consumer:", ue.msg)
		if ue.usage {
			fs.Usage()
		}
	default:
		fmt.Fprintln(stderr, "console-consumer:", err)
	}
	return 1
}

// syncWriter serialises writes to stderr, which the error-reporting
// goroutine shares with the main loop.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}
