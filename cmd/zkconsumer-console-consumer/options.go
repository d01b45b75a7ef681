package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/zkconsumer/zkconsumer/connector"
	"github.com/zkconsumer/zkconsumer/internal/cmdhelp"
	"github.com/zkconsumer/zkconsumer/internal/topicfilter"
	"github.com/zkconsumer/zkconsumer/zkutil"
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
	// matcher is filter as ZooKeeper mode matches topic names, and
	// filterFlag the flag that gave it (--topic, --whitelist, --blacklist),
	// to say when no topic matches yet.
	matcher    *topicfilter.Filter
	filterFlag string
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

// toolName is the command's name in its help and --version.
const toolName = "zkconsumer-console-consumer"

// recycleKey is the connector's zkconsumer.recycle.messages, which this
// program turns on unless a property sets it.
const recycleKey = "zkconsumer.recycle.messages"

// helpIntro is printed above the options, in the help and with a usage
// error.
const helpIntro = description + `

Usage: zkconsumer-console-consumer --zookeeper host:port[/chroot] (--topic T | --whitelist RE | --blacklist RE) [options]
       zkconsumer-console-consumer --bootstrap-server host:port --topic T [options]

`

// newFlagSet declares the flags of Kafka 1.1.1's console consumer, and
// --help and --version. Usage strings name the argument between
// backquotes, which the help shows as <argument>; the help adds each
// default once (internal/cmdhelp).
func newFlagSet(stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(toolName, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.String("zookeeper", "", "REQUIRED (unless --bootstrap-server): the ZooKeeper connection string, in the form `host:port[,host:port][/chroot]`.")
	fs.String("bootstrap-server", "", "The `server(s)` of a group coordinated by Kafka, instead of --zookeeper (Kafka's new consumer).")
	fs.Bool("new-consumer", false, "Deprecated in Kafka 1.1.1: --bootstrap-server implies it. Not valid with --zookeeper.")
	fs.String("topic", "", "The `topic` to consume; a regex, as in Kafka's old console consumer.")
	fs.String("whitelist", "", "A `regex` of the topics to consume.")
	fs.String("blacklist", "", "A `regex` of the topics not to consume.")
	fs.String("partition", "", "The `partition` to consume (Kafka's new consumer only).")
	fs.String("offset", "latest", "The `offset` to start at: a non-negative number, earliest or latest (with --partition only).")
	fs.String("group", "", "The consumer `group` id. (default: console-consumer-<random>, deleted from ZooKeeper on exit)")
	fs.Bool("from-beginning", false, "Start with the earliest message when the group has no committed offset.")
	fs.Bool("delete-consumer-offsets", false, "Delete the group's path in ZooKeeper when starting up.")
	fs.Int("max-messages", -1, "Exit after this `number` of messages. (default: no limit)")
	fs.Int("timeout-ms", -1, "Exit when no message is available for this many `milliseconds`. (default: no timeout)")
	fs.Bool("skip-message-on-error", false, "When a message cannot be formatted, report it and go on instead of stopping.")
	fs.String("consumer.config", "", "A consumer properties `file`; --consumer-property takes precedence.")
	fs.Var(new(multiFlag), "consumer-property", "A consumer property, `key=value` (repeatable).")
	fs.String("formatter", defaultFormatterClass, "The `class` of the formatter: kafka.tools.DefaultMessageFormatter, LoggingMessageFormatter, NoOpMessageFormatter or ChecksumMessageFormatter.")
	fs.Var(new(multiFlag), "property", "A formatter property, `key=value` (repeatable): print.timestamp, print.key, print.value, key.separator, line.separator, key.deserializer, value.deserializer; topic for ChecksumMessageFormatter; print.partition and print.offset as in later Kafka versions.")
	fs.String("key-deserializer", "", "A Kafka deserializer `class` for keys, such as org.apache.kafka.common.serialization.LongDeserializer.")
	fs.String("value-deserializer", "", "A Kafka deserializer `class` for values.")
	fs.String("isolation-level", connector.IsolationReadUncommitted.String(), "The isolation `level`: read_committed leaves out aborted transactional messages (zkconsumer.isolation.level).")
	fs.Bool("enable-systest-events", false, "Also print lifecycle events (shutdown_complete) on stdout, for system tests.")
	fs.Bool("csv-reporter-enabled", false, "Write metrics as CSV files, one per metric, every 5 seconds.")
	fs.String("metrics-dir", "kafka_metrics", "The `directory` of --csv-reporter-enabled.")
	fs.Bool("help", false, "Print this help.")
	fs.Bool("version", false, "Print the tool's name and version.")
	// The flag package's own messages (an unknown flag, a bad number) go
	// to stderr; the help follows them from fail.
	fs.Usage = func() {}
	return fs
}

// printUsage writes the description, the usage lines and every option in
// Kafka's layout.
func printUsage(w io.Writer, fs *flag.FlagSet) {
	_ = cmdhelp.Print(w, helpIntro, fs)
}

// errVersion is returned by parseOptions for --version.
var errVersion = errors.New("version requested")

// parseOptions parses args as Kafka 1.1.1's ConsoleConsumer does, checking
// them in Kafka's order. Flag syntax errors come back as *flagParseError,
// other mistakes as *usageError, or the error of loading --consumer.config.
// Kafka's deprecation warning of the old consumer goes to stderr.
func parseOptions(fs *flag.FlagSet, args []string, stderr io.Writer) (*options, error) {
	if len(args) == 0 {
		return nil, badUsage("") // the usage starts with the description
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) { // -h
			return nil, err
		}
		return nil, &flagParseError{err}
	}
	if fs.NArg() > 0 {
		return nil, badUsage(fmt.Sprintf("unexpected argument %q: every option starts with --", fs.Arg(0)))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case set["help"]:
		return nil, flag.ErrHelp
	case set["version"]:
		return nil, errVersion
	}
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
		pattern := zkutil.PatternWhitelist
		o.filter = connector.Whitelist(regex)
		if chosen[0] == "blacklist" {
			pattern = zkutil.PatternBlacklist
			o.filter = connector.Blacklist(regex)
		}
		matcher, err := topicfilter.New(pattern, regex)
		if err != nil {
			// Kafka's TopicFilter refuses it before connecting too.
			return nil, &usageError{msg: fmt.Sprintf("%s is an invalid regex. (%v)", regex, err)}
		}
		o.matcher, o.filterFlag = matcher, "--"+chosen[0]+" "+regex
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
		if fileProps, err = readPropertiesFile(path); err != nil {
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
	if _, ok := o.props[recycleKey]; !ok {
		// This program is done with a message once it has formatted it
		// into its output buffer, before it asks for the next: the one
		// way of using a message that recycling allows. Reusing the
		// memory of messages saves allocating, zeroing and collecting
		// a response's worth for every fetch.
		o.props[recycleKey] = "true"
	}
	if !useOldConsumer {
		return o, kafkaCoordinatedProps(o)
	}
	earliest, latest := connector.AutoOffsetResetSmallest.String(), connector.AutoOffsetResetLargest.String()
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

// readPropertiesFile reads the Java properties file at path
// (--consumer.config).
func readPropertiesFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	props, err := connector.ParseProperties(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return props, nil
}
