package main

import (
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"

	"github.com/zkconsumer/zkconsumer/connector"
)

// options are the parsed command line, as Kafka 1.1.1's
// ConsoleConsumer.ConsumerConfig computes them.
type options struct {
	zkConnect string
	// bootstrapServer is set, and zkConnect empty, in Kafka's new-consumer
	// mode: a group coordinated by Kafka (see bootstrap.go).
	bootstrapServer string
	// filter is what to consume: Kafka's old console consumer turns
	// --topic into a whitelist too, so --topic is a regex and internal
	// topics need exclude.internal.topics=false.
	filter connector.TopicFilter
	// groupID is the group; groupPassed is false when it was generated,
	// and then the group's znodes are deleted on exit.
	groupID     string
	groupPassed bool
	// props are the consumer properties handed to the connector.
	props         map[string]string
	maxMessages   int
	deleteOffsets bool
	// fromBeginning is --from-beginning as given.
	fromBeginning bool
	format        messageFormatter
	// skipMessageOnError: a message the formatter fails on is reported
	// and skipped instead of ending the program.
	skipMessageOnError bool
	// systestEvents prints "shutdown_complete" on stdout at the very end
	// (--enable-systest-events).
	systestEvents bool
	// metricsDir, when set, is where the CSV metrics reporter writes
	// (--csv-reporter-enabled, --metrics-dir).
	metricsDir string
}

// usageError is a command-line mistake, worded as Kafka words it. Kafka
// prints the message, then the usage when usage is set, and exits with
// status 1.
type usageError struct {
	msg   string
	usage bool
}

func (e *usageError) Error() string { return e.msg }

func badUsage(msg string) error { return &usageError{msg: msg, usage: true} }

// flagParseError is an error of the flag package, which has already
// printed it with the usage.
type flagParseError struct{ err error }

func (e *flagParseError) Error() string { return e.err.Error() }
func (e *flagParseError) Unwrap() error { return e.err }

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

const description = "The console consumer is a tool that reads data from Kafka and outputs it to standard output."

// newFlagSet declares the flags of Kafka 1.1.1's console consumer.
func newFlagSet(stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("console-consumer", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.String("zookeeper", "", "REQUIRED (unless --bootstrap-server): the ZooKeeper connection string, host:port[,host:port][/chroot]")
	fs.String("bootstrap-server", "", "the brokers of a group coordinated by Kafka, instead of --zookeeper (Kafka's new consumer)")
	fs.Bool("new-consumer", false, "deprecated in Kafka 1.1.1: --bootstrap-server implies it; not valid with --zookeeper")
	fs.String("topic", "", "the topic to consume (a regex, as in Kafka's old console consumer)")
	fs.String("whitelist", "", "regex of topics to consume")
	fs.String("blacklist", "", "regex of topics not to consume")
	fs.String("partition", "", "the partition to consume (Kafka's new consumer only)")
	fs.String("offset", "latest", "the offset to start at: a non-negative number, earliest or latest (with --partition only)")
	fs.String("group", "", "consumer group id (default: console-consumer-<random>, deleted from ZooKeeper on exit)")
	fs.Bool("from-beginning", false, "start with the earliest message when the group has no committed offset")
	fs.Bool("delete-consumer-offsets", false, "delete the group's path in ZooKeeper when starting up")
	fs.Int("max-messages", -1, "exit after this many messages (default: unlimited)")
	fs.Int("timeout-ms", -1, "exit when no message is available for this long")
	fs.Bool("skip-message-on-error", false, "when a message cannot be formatted, report it and go on instead of stopping")
	fs.String("consumer.config", "", "consumer properties file; --consumer-property takes precedence")
	fs.Var(new(multiFlag), "consumer-property", "a consumer property key=value (repeatable)")
	fs.String("formatter", defaultFormatterClass, "the formatter: kafka.tools.DefaultMessageFormatter, LoggingMessageFormatter, NoOpMessageFormatter or ChecksumMessageFormatter")
	fs.Var(new(multiFlag), "property", "a formatter property key=value (repeatable): print.timestamp, print.key, print.value, key.separator, line.separator, key.deserializer, value.deserializer; topic for ChecksumMessageFormatter; print.partition and print.offset as in later Kafka versions")
	fs.String("key-deserializer", "", "a Kafka deserializer class for keys, e.g. org.apache.kafka.common.serialization.LongDeserializer")
	fs.String("value-deserializer", "", "a Kafka deserializer class for values")
	fs.String("isolation-level", connector.IsolationReadUncommitted, "read_committed to leave out aborted transactional messages (zkconsumer.isolation.level)")
	fs.Bool("enable-systest-events", false, "also print lifecycle events (shutdown_complete) on stdout, for system tests")
	fs.Bool("csv-reporter-enabled", false, "write metrics as CSV files, one per metric, every 5 seconds")
	fs.String("metrics-dir", "kafka_metrics", "the directory of --csv-reporter-enabled")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), description)
		fmt.Fprintln(fs.Output(), "Usage: console-consumer --zookeeper host:port/chroot (--topic t | --whitelist re | --blacklist re) [flags]")
		fs.PrintDefaults()
	}
	return fs
}

// parseOptions parses args as Kafka 1.1.1's ConsoleConsumer does, checking
// them in Kafka's order. Flag syntax errors come back as *flagParseError,
// other mistakes as *usageError, or the error of loading --consumer.config.
// Kafka's deprecation warning of the old consumer goes to stderr.
func parseOptions(fs *flag.FlagSet, args []string, stderr io.Writer) (*options, error) {
	if len(args) == 0 {
		return nil, badUsage("") // the usage starts with the description
	}
	if err := fs.Parse(args); err != nil {
		return nil, &flagParseError{err}
	}
	if fs.NArg() > 0 {
		return nil, badUsage(fmt.Sprintf("unexpected argument %q: every option starts with --", fs.Arg(0)))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	str := func(name string) string { return fs.Lookup(name).Value.String() }
	num := func(name string) int { return fs.Lookup(name).Value.(flag.Getter).Get().(int) }
	boolean := func(name string) bool { return fs.Lookup(name).Value.(flag.Getter).Get().(bool) }
	list := func(name string) []string { return *fs.Lookup(name).Value.(*multiFlag) }

	o := &options{
		zkConnect:          str("zookeeper"),
		maxMessages:        num("max-messages"),
		deleteOffsets:      boolean("delete-consumer-offsets"),
		fromBeginning:      boolean("from-beginning"),
		skipMessageOnError: boolean("skip-message-on-error"),
		systestEvents:      boolean("enable-systest-events"),
	}
	useOldConsumer := set["zookeeper"]

	formatProps, err := parseKeyValueArgs(list("property"))
	if err != nil {
		return nil, err
	}
	for flagName, key := range map[string]string{"key-deserializer": "key.deserializer", "value-deserializer": "value.deserializer"} {
		if v := str(flagName); v != "" {
			formatProps[key] = v
		}
	}
	if o.format, err = newMessageFormatter(str("formatter"), formatProps); err != nil {
		return nil, err
	}

	if useOldConsumer {
		switch {
		case set["bootstrap-server"]:
			return nil, badUsage("Option [bootstrap-server] is not valid with [zookeeper].")
		case set["new-consumer"]:
			return nil, badUsage("Option [new-consumer] is not valid with [zookeeper].")
		}
		var chosen []string
		for _, name := range []string{"topic", "whitelist", "blacklist"} {
			if set[name] {
				chosen = append(chosen, name)
			}
		}
		if len(chosen) != 1 {
			return nil, badUsage("Exactly one of whitelist/blacklist/topic is required.")
		}
		regex := str(chosen[0])
		o.filter = connector.Whitelist(regex)
		if chosen[0] == "blacklist" {
			o.filter = connector.Blacklist(regex)
		}
		if err := o.filter.Validate(); err != nil {
			// Kafka's TopicFilter refuses it before connecting too.
			return nil, &usageError{msg: fmt.Sprintf("%s is an invalid regex. (%v)", regex, err)}
		}
		fmt.Fprintln(stderr, "Using the ConsoleConsumer with old consumer is deprecated and will be removed "+
			"in a future major release. Consider using the new consumer by passing [bootstrap-server] instead of [zookeeper].")
		if set["partition"] || set["offset"] {
			return nil, badUsage("Partition-offset based consumption is supported in the new consumer only.")
		}
	} else if err := checkNewConsumerArgs(set, str, o, stderr); err != nil {
		return nil, err
	}

	if boolean("csv-reporter-enabled") {
		o.metricsDir = str("metrics-dir")
	}

	extra, err := parseKeyValueArgs(list("consumer-property"))
	if err != nil {
		return nil, err
	}
	fileProps := map[string]string{}
	if path := str("consumer.config"); set["consumer.config"] {
		if fileProps, err = connector.LoadPropertiesFile(path); err != nil {
			return nil, err
		}
	}

	// A group id may come from --group, --consumer-property and
	// --consumer.config; all that are given must agree.
	groups := map[string]bool{}
	if set["group"] {
		groups[str("group")] = true
	}
	if g, ok := extra["group.id"]; ok {
		groups[g] = true
	}
	if g, ok := fileProps["group.id"]; ok {
		groups[g] = true
	}
	switch len(groups) {
	case 0:
		o.groupID = randomGroupID()
	case 1:
		for g := range groups {
			o.groupID = g
		}
		o.groupPassed = true
	default:
		ids := make([]string, 0, len(groups))
		for g := range groups {
			ids = append(ids, g)
		}
		sort.Strings(ids)
		return nil, badUsage("The group ids provided in different places (directly using '--group', via '--consumer-property', or via '--consumer.config') do not match. Detected group ids: '" + strings.Join(ids, "', '") + "'")
	}

	o.props = fileProps
	for k, v := range extra {
		o.props[k] = v
	}
	o.props["group.id"] = o.groupID
	if set["isolation-level"] {
		o.props["zkconsumer.isolation.level"] = str("isolation-level")
	}
	if t := num("timeout-ms"); t >= 0 {
		o.props["consumer.timeout.ms"] = strconv.Itoa(t)
	}
	if !useOldConsumer {
		return o, kafkaCoordinatedProps(o)
	}
	earliest, latest := connector.AutoOffsetResetSmallest, connector.AutoOffsetResetLargest
	if reset, ok := o.props["auto.offset.reset"]; ok {
		if o.fromBeginning && reset != earliest {
			return nil, &usageError{msg: fmt.Sprintf("Can't simultaneously specify --from-beginning and 'auto.offset.reset=%s', please remove one option", reset)}
		}
	} else if o.fromBeginning {
		o.props["auto.offset.reset"] = earliest
	} else {
		o.props["auto.offset.reset"] = latest
	}
	if reset := o.props["auto.offset.reset"]; reset != earliest && reset != latest {
		// Kafka 1.1.1's old consumer knows only its own names; the
		// connector also takes the new consumer's.
		return nil, &connector.ConfigError{Key: "auto.offset.reset", Value: reset,
			Reason: "must be one of smallest, largest with --zookeeper, as in Kafka 1.1.1's old consumer (earliest and latest are the new consumer's names: use --bootstrap-server)"}
	}
	o.props["zookeeper.connect"] = o.zkConnect
	return o, nil
}

// randomGroupID is the group of a console consumer started without one,
// as Kafka names it.
func randomGroupID() string {
	return "console-consumer-" + strconv.Itoa(rand.IntN(100000))
}

// parseKeyValueArgs parses key=value arguments as Kafka 1.1.1's
// CommandLineUtils.parseKeyValueArgs does: the argument is split at every
// '=' (Java's String.split, which drops trailing empty strings); "key"
// alone means an empty value, and more than one '=' is an error.
func parseKeyValueArgs(args []string) (map[string]string, error) {
	props := map[string]string{}
	for _, arg := range args {
		parts := strings.Split(arg, "=")
		if arg == "" {
			parts = []string{""} // Java: "".split("=") is [""]
		}
		for len(parts) > 0 && parts[len(parts)-1] == "" && arg != "" {
			parts = parts[:len(parts)-1]
		}
		switch len(parts) {
		case 0: // "=", "==": Kafka skips them
		case 1:
			props[parts[0]] = ""
		case 2:
			props[parts[0]] = parts[1]
		default:
			return nil, &usageError{msg: "Invalid command line properties: " + strings.Join(args, " ")}
		}
	}
	return props, nil
}
