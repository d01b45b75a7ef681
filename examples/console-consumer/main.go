// Command console-consumer prints messages of a topic to standard output,
// one message a line, as a member of a ZooKeeper-coordinated consumer group.
// It takes the flags of Kafka's old console consumer
// (kafka-console-consumer.sh --zookeeper ...):
//
//	go run ./examples/console-consumer --zookeeper 127.0.0.1:2181/kafka --topic orders --from-beginning
//	go run ./examples/console-consumer --zookeeper ... --whitelist 'orders|payments' --property print.key=true
//
// It stops after --max-messages messages, after --timeout-ms without a
// message, or on SIGINT/SIGTERM, and leaves the group cleanly.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/zkconsumer/zkconsumer/connector"
	"github.com/zkconsumer/zkconsumer/stream"
)

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	n, err := run(ctx, os.Args[1:], os.Stdout)
	fmt.Fprintf(os.Stderr, "Processed a total of %d messages\n", n)
	if err != nil {
		fmt.Fprintln(os.Stderr, "console-consumer:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) (int, error) {
	fs := flag.NewFlagSet("console-consumer", flag.ContinueOnError)
	var (
		zkConnect     = fs.String("zookeeper", "", "REQUIRED: the ZooKeeper connection string, host:port[,host:port]/chroot")
		topic         = fs.String("topic", "", "the topic to consume")
		whitelist     = fs.String("whitelist", "", "regex of topics to consume")
		blacklist     = fs.String("blacklist", "", "regex of topics not to consume")
		group         = fs.String("group", "", "consumer group id (default: console-consumer-<random>)")
		fromBeginning = fs.Bool("from-beginning", false, "start at the earliest message when the group has no committed offset")
		maxMessages   = fs.Int("max-messages", -1, "exit after this many messages (default: unlimited)")
		timeoutMs     = fs.Int("timeout-ms", -1, "exit when no message arrives for this long")
		configFile    = fs.String("consumer.config", "", "consumer properties file")
		consumerProps multiFlag
		formatProps   multiFlag
	)
	fs.Var(&consumerProps, "consumer-property", "a consumer property key=value (repeatable)")
	fs.Var(&formatProps, "property", "a formatter property: print.key, print.partition, print.offset, print.timestamp, key.separator, line.separator (repeatable)")
	if err := fs.Parse(args); err != nil {
		return 0, err
	}
	props := map[string]string{}
	if *configFile != "" {
		loaded, err := connector.LoadPropertiesFile(*configFile)
		if err != nil {
			return 0, err
		}
		props = loaded
	}
	for _, kv := range consumerProps {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return 0, fmt.Errorf("--consumer-property %q: want key=value", kv)
		}
		props[k] = v
	}
	if *zkConnect == "" {
		return 0, errors.New("--zookeeper is required")
	}
	props["zookeeper.connect"] = *zkConnect
	if *group != "" {
		props["group.id"] = *group
	} else if props["group.id"] == "" {
		props["group.id"] = fmt.Sprintf("console-consumer-%d", rand.IntN(100000))
	}
	if *fromBeginning {
		props["auto.offset.reset"] = "smallest"
	}
	if *timeoutMs >= 0 {
		props["consumer.timeout.ms"] = strconv.Itoa(*timeoutMs)
	}
	format, err := newFormatter(formatProps)
	if err != nil {
		return 0, err
	}
	chosen := 0
	for _, s := range []string{*topic, *whitelist, *blacklist} {
		if s != "" {
			chosen++
		}
	}
	if chosen != 1 {
		return 0, errors.New("exactly one of --topic, --whitelist and --blacklist is required")
	}

	cfg, warnings, err := connector.ConfigFromProperties(props)
	for _, w := range warnings {
		fmt.Fprintln(os.Stderr, "console-consumer: warning:", w)
	}
	if err != nil {
		return 0, err
	}
	c, err := connector.New(cfg)
	if err != nil {
		return 0, err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = c.Shutdown(sctx)
	}()
	var streams []*stream.KafkaStream
	switch {
	case *topic != "":
		m, err := c.CreateMessageStreams(ctx, map[string]int{*topic: 1})
		if err != nil {
			return 0, err
		}
		streams = m[*topic]
	case *whitelist != "":
		streams, err = c.CreateMessageStreamsByFilter(ctx, connector.Whitelist(*whitelist), 1)
	default:
		streams, err = c.CreateMessageStreamsByFilter(ctx, connector.Blacklist(*blacklist), 1)
	}
	if err != nil {
		return 0, err
	}
	go func() {
		for err := range c.Errors() {
			fmt.Fprintln(os.Stderr, "console-consumer:", err)
		}
	}()

	out := bufio.NewWriterSize(stdout, 64<<10)
	defer out.Flush()
	count := 0
	s := streams[0]
	for *maxMessages < 0 || count < *maxMessages {
		msg, err := s.Next(ctx)
		switch {
		case errors.Is(err, stream.ErrConsumerTimeout):
			return count, nil // Kafka's console consumer exits quietly on timeout
		case errors.Is(err, context.Canceled), errors.Is(err, stream.ErrShutdown):
			return count, nil
		case err != nil:
			var pe *stream.PartitionError
			if errors.As(err, &pe) {
				fmt.Fprintln(os.Stderr, "console-consumer:", err)
				continue
			}
			return count, err
		}
		format.write(out, msg)
		s.MarkConsumed(msg) // printed counts as processed
		count++
		if out.Buffered() > 32<<10 {
			out.Flush()
		}
	}
	return count, nil
}
