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
// ConsoleConsumer.ConsumerConfig computes them for the old consumer.
type options struct {
	zkConnect string
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
	format        *formatter
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

// newFlagSet declares the flags of Kafka's old console consumer that this
// program supports.
func newFlagSet(stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("console-consumer", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.String("zookeeper", "", "REQUIRED: the ZooKeeper connection string, host:port[,host:port][/chroot]")
	fs.String("topic", "", "the topic to consume (a regex, as in Kafka's old console consumer)")
	fs.String("whitelist", "", "regex of topics to consume")
	fs.String("blacklist", "", "regex of topics not to consume")
	fs.String("group", "", "consumer group id (default: console-consumer-<random>, deleted from ZooKeeper on exit)")
	fs.Bool("from-beginning", false, "start with the earliest message when the group has no committed offset")
	fs.Bool("delete-consumer-offsets", false, "delete the group's path in ZooKeeper when starting up")
	fs.Int("max-messages", -1, "exit after this many messages (default: unlimited)")
	fs.Int("timeout-ms", -1, "exit when no message is available for this long")
	fs.String("consumer.config", "", "consumer properties file; --consumer-property takes precedence")
	fs.Var(new(multiFlag), "consumer-property", "a consumer property key=value (repeatable)")
	fs.Var(new(multiFlag), "property", "a formatter property key=value (repeatable): print.timestamp, print.key, print.value, key.separator, line.separator; print.partition and print.offset as in later Kafka versions")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "The console consumer is a tool that reads data from Kafka and outputs it to standard output.")
		fmt.Fprintln(fs.Output(), "Usage: console-consumer --zookeeper host:port/chroot (--topic t | --whitelist re | --blacklist re) [flags]")
		fs.PrintDefaults()
	}
	return fs
}

// parseOptions parses args as Kafka 1.1.1's ConsoleConsumer does with
// --zookeeper. Flag syntax errors come back as *flagParseError, other
// mistakes as *usageError, or the error of loading --consumer.config.
func parseOptions(fs *flag.FlagSet, args []string) (*options, error) {
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

	o := &options{zkConnect: str("zookeeper"), maxMessages: num("max-messages"), deleteOffsets: boolean("delete-consumer-offsets")}
	if !set["zookeeper"] || o.zkConnect == "" {
		return nil, badUsage(`Missing required argument "zookeeper": this is the old, ZooKeeper-based console consumer`)
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
	if chosen[0] == "blacklist" {
		o.filter = connector.Blacklist(str("blacklist"))
	} else {
		o.filter = connector.Whitelist(str(chosen[0]))
	}

	formatProps, err := parseKeyValueArgs(list("property"))
	if err != nil {
		return nil, err
	}
	o.format = newFormatter(formatProps)

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
	fromBeginning := boolean("from-beginning")
	if reset, ok := o.props["auto.offset.reset"]; ok {
		if fromBeginning && reset != connector.AutoOffsetResetSmallest {
			return nil, &usageError{msg: fmt.Sprintf("Can't simultaneously specify --from-beginning and 'auto.offset.reset=%s', please remove one option", reset)}
		}
	} else if fromBeginning {
		o.props["auto.offset.reset"] = connector.AutoOffsetResetSmallest
	} else {
		o.props["auto.offset.reset"] = connector.AutoOffsetResetLargest
	}
	o.props["zookeeper.connect"] = o.zkConnect
	if t := num("timeout-ms"); t >= 0 {
		o.props["consumer.timeout.ms"] = strconv.Itoa(t)
	}
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
