// Command zkconsumer-console-consumer prints messages of topics to standard output, as
// a member of a ZooKeeper-coordinated consumer group. It behaves like Kafka
// 1.1.1's old console consumer (kafka-console-consumer.sh --zookeeper ...)
// and takes the same flags, with Kafka's formatters (--formatter
// kafka.tools.DefaultMessageFormatter and its properties, Logging-, NoOp-
// and ChecksumMessageFormatter), Kafka's deserializers
// (--key-deserializer, --value-deserializer), --skip-message-on-error,
// --enable-systest-events, --isolation-level and --csv-reporter-enabled;
// --partition, --offset, --new-consumer and --bootstrap-server get Kafka's
// refusals (without --zookeeper, --bootstrap-server runs the group in the
// Kafka-coordinated mode, as Kafka 1.1.1's new consumer):
//
//	go install github.com/zkconsumer/zkconsumer/cmd/zkconsumer-console-consumer@latest
//	zkconsumer-console-consumer --zookeeper 127.0.0.1:2181/kafka --topic orders --from-beginning
//	zkconsumer-console-consumer --zookeeper 127.0.0.1:2181/kafka --whitelist 'orders|payments' \
//		--property print.key=true --property print.timestamp=true --group audit
//
// As in Kafka, --topic is a regex like --whitelist, internal topics are
// left out unless exclude.internal.topics=false, a group started with
// --from-beginning must not have offsets yet (--delete-consumer-offsets
// deletes them), and a group generated because none was given
// (console-consumer-<random>) is deleted from ZooKeeper on exit.
//
// It stops after --max-messages messages, after --timeout-ms without a
// message, when standard output is closed (| head), or on SIGINT/SIGTERM;
// it then leaves the group, committing what it printed, and reports
// "Processed a total of N messages" on standard error. The exit status is
// Kafka's: 0, 1 after an error, 128+n after signal n (130 for Ctrl-C).
//
// --help prints every option in the two-column layout of Kafka's tools,
// --version the tool's name and module version.
//
// When standard output is not a terminal, output is buffered; offsets are
// committed only for messages written out. As it is done with a message
// once it has formatted it, it turns on zkconsumer.recycle.messages
// unless a property sets it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/zkconsumer/zkconsumer/connector"
	"github.com/zkconsumer/zkconsumer/internal/cmdhelp"
)

func main() {
	// A closed pipe on stdout makes writes fail with EPIPE instead of
	// killing the process, so that it shuts down and commits.
	signal.Ignore(syscall.SIGPIPE)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithCancel(context.Background())
	var got atomic.Value
	go func() {
		s := <-sigs
		got.Store(s)
		cancel()
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	if s, ok := got.Load().(syscall.Signal); ok {
		code = 128 + int(s) // as the JVM exits after its shutdown hooks
	}
	os.Exit(code)
}

// shutdownTimeout bounds leaving the group and deleting a generated one.
const shutdownTimeout = 30 * time.Second

// run is the whole program: it consumes as args say, prints messages on
// stdout and everything else on stderr, and returns the exit status: 0
// after a normal end (max messages, timeout, closed stdout, ctx cancelled
// by a signal), 1 after an error, as Kafka's does.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	stderr = &syncWriter{w: stderr}
	fs := newFlagSet(stderr)
	o, err := parseOptions(fs, args, stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		printUsage(stdout, fs)
		return 0
	case errors.Is(err, errVersion):
		fmt.Fprintln(stdout, cmdhelp.Version(toolName))
		return 0
	case err != nil:
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
	if o.bootstrapServer == "" { // Kafka's new consumer makes no ZooKeeper checks
		if err := checkZK(ctx, cfg, o, stderr); err != nil {
			if ctx.Err() != nil {
				return 0 // interrupted while connecting, as while joining; main reports the signal
			}
			return fail(fs, stderr, err)
		}
	}
	if o.metricsDir != "" {
		rep, err := newCSVReporter(o.metricsDir, func(err error) { fmt.Fprintln(stderr, err) })
		if err != nil {
			return fail(fs, stderr, err)
		}
		cfg.Metrics = rep
	}

	out := newOutput(stdout, !isTerminal(stdout))
	commits := newCommitter(out, cfg, stderr)
	cfg.AutoCommitEnable = false // commits follows what is written out instead
	// It prints what the connector reports (Errors, the mode warnings)
	// itself, as Kafka's tools show only warnings: the connector's log
	// records, which would otherwise go to slog.Default(), are dropped.
	cfg.Logger = slog.New(slog.DiscardHandler)
	c, err := connector.New(ctx, cfg, connector.WithRebalanceListener(commits))
	if err != nil {
		_ = out.close()
		if ctx.Err() != nil {
			return 0 // interrupted while connecting, as while joining; main reports the signal
		}
		return fail(fs, stderr, err)
	}
	commits.c = c
	commits.start()

	cs := &consumption{o: o, out: out, stderr: stderr}
	// A fatal group error (a refused password or certificate, a fenced
	// group.instance.id) ends the run, as the exception Kafka's consumer
	// throws from poll does.
	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var errorsDone sync.WaitGroup
	errorsDone.Go(func() {
		for err := range c.Errors() { // closed by Shutdown
			fmt.Fprintln(stderr, "console-consumer:", err)
			if errors.Is(err, connector.ErrGroupFatal) {
				stop(err)
			}
		}
	})
	code := cs.consume(runCtx, c)

	// Kafka's finally: the consumer's cleanup (its last commit), the
	// count, the generated group's removal; then the shutdown hook.
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := out.close(); err != nil && !cs.outputFailed {
		fmt.Fprintln(stderr, "Unable to write to standard out, closing consumer.")
	}
	commits.final(sctx)
	if err := c.Shutdown(sctx); err != nil {
		fmt.Fprintln(stderr, "console-consumer: shutdown:", err)
	}
	errorsDone.Wait()
	fmt.Fprintf(stderr, "Processed a total of %d messages\n", cs.count)
	if !o.groupPassed && o.bootstrapServer == "" {
		if err := deleteGroup(sctx, cfg); err != nil {
			fmt.Fprintln(stderr, "console-consumer: delete generated group:", err)
		}
	}
	if cs.fatal != nil {
		logError(stderr, "Unknown error when running consumer: ", cs.fatal)
	}
	if o.systestEvents {
		_, _ = io.WriteString(stdout, "shutdown_complete\n")
	}
	return code
}

// consumption is the main loop's state.
type consumption struct {
	o            *options
	out          *output
	stderr       io.Writer
	count        int   // messages taken from the stream, Kafka's messageCount
	outputFailed bool  // stdout failed, and that was reported
	fatal        error // to report after the cleanup, as Kafka's main does
}

// consume joins the group and prints messages until the end, returning
// the exit status.
func (cs *consumption) consume(ctx context.Context, c *connector.ConsumerConnector) int {
	o := cs.o
	// In Kafka mode, failures that the member retries while it joins (an
	// unreachable bootstrap.servers, ...) are printed from Errors
	// meanwhile; as Kafka 1.1.1's consumer, it keeps trying until
	// interrupted.
	streams, err := c.CreateMessageStreamsByFilter(ctx, o.filter, 1)
	switch {
	case err == nil:
	case errors.Is(err, connector.ErrGroupFatal), errors.Is(context.Cause(ctx), connector.ErrGroupFatal):
		return 1 // printed from Errors
	case ctx.Err() != nil:
		return 0 // interrupted while joining
	default:
		fmt.Fprintln(cs.stderr, "console-consumer:", err)
		return 1
	}
	s := streams[0]
	// Stop waiting for messages as soon as stdout fails.
	loopCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-cs.out.Failed():
			cancel(errOutput)
		case <-loopCtx.Done():
		}
	}()
	for o.maxMessages == -1 || cs.count < o.maxMessages {
		msg, err := s.Next(loopCtx)
		switch {
		case err == nil:
		case errors.Is(err, connector.ErrConsumerTimeout):
			logError(cs.stderr, "Error processing message, terminating consumer process: ", errConsumerTimeout)
			return 0
		case errors.Is(err, connector.ErrShutdown):
			return 0
		case errors.Is(context.Cause(loopCtx), errOutput):
			return cs.writeFailed()
		case errors.Is(context.Cause(ctx), connector.ErrGroupFatal):
			return 1 // printed from Errors
		case ctx.Err() != nil && errors.Is(err, ctx.Err()):
			return 0
		default:
			// Kafka's old console consumer stops at the first error,
			// a partition's included.
			logError(cs.stderr, "Error processing message, terminating consumer process: ", err)
			return 1
		}
		cs.count++
		formatErr, writeErr := cs.out.add(msg, o.format, o.skipMessageOnError)
		if formatErr != nil {
			if !o.skipMessageOnError {
				cs.fatal = formatErr
				return 1
			}
			logError(cs.stderr, "Error processing message, skipping this message: ", formatErr)
		}
		if writeErr != nil {
			return cs.writeFailed()
		}
	}
	return 0
}

// writeFailed reports, as Kafka does, that stdout is gone; the program
// then ends normally.
func (cs *consumption) writeFailed() int {
	cs.outputFailed = true
	fmt.Fprintln(cs.stderr, "Unable to write to standard out, closing consumer.")
	return 0
}

// errConsumerTimeout is how Kafka names the end of --timeout-ms.
var errConsumerTimeout = errors.New("kafka.consumer.ConsumerTimeoutException")

// logError prints msg and err as Kafka's tools log an error with log4j:
// "[date] ERROR msg (kafka.tools.ConsoleConsumer$)", then the exception.
func logError(w io.Writer, msg string, err error) {
	fmt.Fprintf(w, "[%s] ERROR %s (kafka.tools.ConsoleConsumer$)\n%v\n",
		time.Now().Format("2006-01-02 15:04:05,000"), msg, err)
}

// fail reports err on stderr, with the usage for command-line mistakes as
// Kafka does, and returns the exit status.
func fail(fs *flag.FlagSet, stderr io.Writer, err error) int {
	var ue *usageError
	var pe *flagParseError
	switch {
	case errors.As(err, &pe):
		// The flag package has printed the error.
		printUsage(stderr, fs)
	case errors.As(err, &ue):
		if ue.msg != "" {
			fmt.Fprintln(stderr, ue.msg)
		}
		if ue.usage {
			printUsage(stderr, fs)
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
