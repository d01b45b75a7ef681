package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/groups"
)

// defaultTimeout bounds each network step when --timeout is not given.
const defaultTimeout = 30 * time.Second

// options are the parsed command line.
type options struct {
	// ZooKeeper is --zookeeper, "host:port[,host:port...][/chroot]".
	ZooKeeper string
	// Group is the first --group; Groups all of them (--delete takes
	// several).
	Group  string
	Groups []string
	// Topics are the --topic values, "topic" or "topic:0,1,2".
	Topics []string
	// BootstrapServer is --bootstrap-server, for --migrate-to-kafka.
	BootstrapServer string
	// Force is --force (--migrate-to-kafka).
	Force bool
	// Execute is true with --execute; otherwise the command is a dry run.
	Execute bool
	// DryRun is --dry-run, the default of --reset-offsets.
	DryRun bool
	// CommandConfig is --command-config: a properties file with the
	// security settings of the broker and ZooKeeper connections.
	CommandConfig string
	// Timeout is --timeout: it bounds every network step (dialing
	// ZooKeeper, each ZooKeeper read or write phase, each broker request).
	Timeout time.Duration

	// Actions; exactly one is set (--export with --reset-offsets is a
	// modifier of the latter).
	List, Describe, Delete, DeleteOffsets, ResetOffsets, Export, MigrateToKafka bool

	// --describe modifiers; State is also --list's.
	AllGroups, Offsets, Members, State, Verbose bool
	// StateFilter is the argument of --list --state: the states to list,
	// as given (comma-separated); empty lists every group with its state.
	StateFilter string

	// --reset-offsets scope and specification.
	AllTopics                       bool
	ToEarliest, ToLatest, ToCurrent bool
	ToOffset, ShiftBy               int64
	ToDatetime, ByDuration          string
	FromFile                        string

	// --export options.
	Format, OutputFile string

	Help, Version bool

	set map[string]bool // the flags given
}

// has reports whether the flag name was given.
func (o *options) has(name string) bool { return o.set[name] }

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// timeoutValue accepts a Go duration ("30s", "1m") or, as Kafka's
// --timeout, a number of milliseconds.
type timeoutValue struct{ d *time.Duration }

func (t timeoutValue) String() string {
	if t.d == nil {
		return ""
	}
	return t.d.String()
}

func (t timeoutValue) Set(v string) error {
	if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
		*t.d = time.Duration(ms) * time.Millisecond
	} else if d, err := time.ParseDuration(v); err == nil {
		*t.d = d
	} else {
		return fmt.Errorf("%q is neither milliseconds nor a duration such as 30s", v)
	}
	if *t.d <= 0 {
		return errors.New("must be positive")
	}
	return nil
}

// stateValue is --state: a flag that --describe takes alone and --list
// with or without the states to list ("--state", "--state Stable,Empty").
type stateValue struct{ o *options }

func (s stateValue) String() string {
	if s.o == nil || !s.o.State {
		return ""
	}
	return s.o.StateFilter
}

func (s stateValue) Set(v string) error {
	s.o.State = true
	if v != "true" {
		s.o.StateFilter = v
	}
	return nil
}

func (stateValue) IsBoolFlag() bool { return true }
func (stateValue) OptionalArg()     {}

// newFlagSet declares every option on o. Usage strings name the argument
// between backquotes, which the help shows as <argument>.
func newFlagSet(o *options) *flag.FlagSet {
	fs := flag.NewFlagSet("zkconsumer-groups", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.Timeout = defaultTimeout

	fs.StringVar(&o.ZooKeeper, "zookeeper", "", "REQUIRED (except for --delete-offsets with --bootstrap-server): the ZooKeeper connection string of the cluster, in the form `host:port[,host:port...][/chroot]`, as in the consumers' zookeeper.connect.")
	fs.Var((*stringList)(&o.Groups), "group", "The consumer `group` to act on. --delete accepts several: --group g1 --group g2.")
	fs.Var((*stringList)(&o.Topics), "topic", "The `topic` whose offsets and owners --delete removes, whose offsets --delete-offsets deletes, or that --reset-offsets resets. For --reset-offsets and --delete-offsets, partitions may be given as topic1:0,1,2, and --topic may be repeated.")
	fs.Var(timeoutValue{&o.Timeout}, "timeout", "A `timeout` bounding every network step: connecting to ZooKeeper, each series of ZooKeeper reads or writes, each broker request. A duration such as 30s, or a number of milliseconds as in Kafka.")

	fs.BoolVar(&o.List, "list", false, "List all consumer groups registered in ZooKeeper. Add --state to show each group's state, or --state with states to list only the groups in them.")
	fs.BoolVar(&o.Describe, "describe", false, "Describe a consumer group (--group) or all of them (--all-groups): committed offset, log end offset and lag of each partition, and its owner. Add --members or --state for other views.")
	fs.BoolVar(&o.AllGroups, "all-groups", false, "With --describe: describe every group.")
	fs.BoolVar(&o.Offsets, "offsets", false, "With --describe: list each partition with its offsets, lag and owner (the default view).")
	fs.BoolVar(&o.Members, "members", false, "With --describe: list the registered members: consumer id, host, partitions owned, streams per topic, subscription pattern and registration time.")
	fs.Var(stateValue{o}, "state", "With --describe: show the group's state, its number of members, and how many of its partitions are owned. With --list: show each group's state; given a comma-separated list of `states`, list only the groups in one of them. A ZooKeeper group is Empty when no member is registered, Stable when members are registered and each partition of the topics they subscribe to is owned by one of them, and Rebalancing otherwise (some partition unowned, or owned by a consumer no longer registered). States match without regard to case.")
	fs.BoolVar(&o.Verbose, "verbose", false, "With --describe: add columns. With the offsets view: HOST, the host of the owning consumer, and THREAD, the consumer thread (stream) owning the partition. With --members: ASSIGNMENT, the partitions each member owns, as topic(0,1). --state has no more to show.")
	fs.BoolVar(&o.Delete, "delete", false, "Delete consumer group information from ZooKeeper. With --group (repeatable): the whole group. With --group and --topic: only that topic's offsets and owners (the whole group if it is its only topic). With only --topic: that topic's offsets and owners in every inactive group. Groups with registered members are refused; nothing is deleted unless every named group can be.")

	fs.BoolVar(&o.DeleteOffsets, "delete-offsets", false, "Delete the committed offsets of one group (--group) for the topics named with --topic, all of a topic's partitions or those given as topic:0,1; --topic may be repeated. As Kafka's group coordinator does, the offsets of topics the group's registered members subscribe to are refused and the others deleted, all of them when no member is registered. A ZooKeeper group by default; with --bootstrap-server instead of --zookeeper, a group coordinated by Kafka (OffsetDelete, Kafka 2.4 or later). Prints the outcome of each partition.")
	fs.BoolVar(&o.ResetOffsets, "reset-offsets", false, "Reset the committed offsets of one group (--group), which must have no registered member; a group that does not exist yet gets offsets for the topics named with --topic or --from-file. Give the scope with --all-topics or --topic (not needed with --from-file), and exactly one of --to-earliest, --to-latest, --to-current, --to-offset, --shift-by, --to-datetime, --by-duration, --from-file. --dry-run (the default) prints the plan, --execute writes it. Offsets outside the log are clamped to it, with a note. Add --export to print the plan as CSV instead of a table.")
	fs.BoolVar(&o.AllTopics, "all-topics", false, "With --reset-offsets: every topic the group has offsets or owners for.")
	fs.BoolVar(&o.ToEarliest, "to-earliest", false, "Reset offsets to the earliest offset of each log.")
	fs.BoolVar(&o.ToLatest, "to-latest", false, "Reset offsets to the latest offset (log end) of each log.")
	fs.BoolVar(&o.ToCurrent, "to-current", false, "Reset offsets to the current committed offsets: kept as they are, with a note when the log no longer holds them; partitions without one get the log end offset, as in Kafka.")
	fs.Int64Var(&o.ToOffset, "to-offset", 0, "Reset offsets to a specific `offset`.")
	fs.Int64Var(&o.ShiftBy, "shift-by", 0, "Reset offsets by shifting the current offset by `n`, where n can be positive or negative.")
	fs.StringVar(&o.ToDatetime, "to-datetime", "", "Reset offsets to the first message at or after a `datetime`. Format: 'YYYY-MM-DDTHH:mm:SS.sss', optionally followed by a zone such as Z, +02 or +02:00; without one, UTC, as in Kafka.")
	fs.StringVar(&o.ByDuration, "by-duration", "", "Reset offsets to the first message at or after now minus a `duration`. Format: 'PnDTnHnMnS'.")
	fs.StringVar(&o.FromFile, "from-file", "", "Reset offsets to the values in a `file`: Kafka's CSV (topic,partition,offset per line, as --export and kafka-consumer-groups.sh --reset-offsets --export write it) or Kafka's ExportZkOffsets/ImportZkOffsets format (/consumers/<group>/offsets/<topic>/<partition>:<offset> per line); the format is detected. Entries of other groups (zk format, or CSV with a group column) are skipped with a warning.")
	fs.BoolVar(&o.DryRun, "dry-run", false, "Only show what would be done: what --reset-offsets and --migrate-to-kafka do unless --execute is given.")
	fs.BoolVar(&o.Execute, "execute", false, "Execute the operation (--reset-offsets, --migrate-to-kafka).")

	fs.BoolVar(&o.Export, "export", false, "Export a group's committed offsets (--group): alone, to --output-file or stdout in --format csv or zk. With --reset-offsets, print the planned offsets as CSV (as Kafka's --export does) instead of the table. The files can be read back with --reset-offsets --from-file, by Kafka's kafka-consumer-groups.sh --reset-offsets --from-file (csv) and by Kafka's kafka.tools.ImportZkOffsets (zk).")
	fs.StringVar(&o.Format, "format", "csv", "With --export: the file `format`, csv (topic,partition,offset) or zk (Kafka's ExportZkOffsets format).")
	fs.StringVar(&o.OutputFile, "output-file", "", "With --export: write to this `file` instead of stdout; it is written whole or not at all.")

	fs.BoolVar(&o.MigrateToKafka, "migrate-to-kafka", false, "Copy a group's ZooKeeper offsets (--group) to Kafka's group coordinator (--bootstrap-server), for consumers moving to offsets.storage=kafka or the Java consumer. --dry-run (the default) shows the plan, --execute commits it.")
	fs.StringVar(&o.BootstrapServer, "bootstrap-server", "", "With --migrate-to-kafka or --delete-offsets: the `server(s)` to connect to, host:port[,host:port...]. With --delete-offsets it names a group coordinated by Kafka, and --zookeeper is not given.")
	fs.BoolVar(&o.Force, "force", false, "With --migrate-to-kafka: migrate although members are registered in ZooKeeper; safe only while they commit to Kafka too (dual.commit.enabled=true).")

	fs.StringVar(&o.CommandConfig, "command-config", "", "A properties `file` with the security settings of the connections to the brokers (security.protocol, ssl.*, sasl.*, as for Kafka's clients, or librdkafka's ssl.ca.location, sasl.username, ...) and to ZooKeeper (zookeeper.auth, zookeeper.set.acl, zookeeper.ssl.*). Other keys are ignored with a warning.")
	fs.BoolVar(&o.Help, "help", false, "Print this help.")
	fs.BoolVar(&o.Version, "version", false, "Print the tool's name and version.")
	return fs
}

// parseArgs parses args into options and checks their combination.
func parseArgs(args []string) (*options, *flag.FlagSet, error) {
	o := &options{set: map[string]bool{}}
	fs := newFlagSet(o)
	if err := fs.Parse(joinOptionalArgs(args)); err != nil {
		return o, fs, err
	}
	fs.Visit(func(f *flag.Flag) { o.set[f.Name] = true })
	if o.Help || o.Version {
		return o, fs, nil
	}
	if fs.NArg() > 0 {
		return o, fs, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if len(o.Groups) > 0 {
		o.Group = o.Groups[0]
	}
	return o, fs, o.check()
}

// joinOptionalArgs returns args with "--state X" written "--state=X":
// --state is a boolean flag to the flag package, which would take X for
// an argument of the command, and the command takes none.
func joinOptionalArgs(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		if (a == "--state" || a == "-state") && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			out = append(out, a+"="+args[i+1])
			i++
			continue
		}
		out = append(out, a)
	}
	return out
}

// check validates the combination of options.
func (o *options) check() error {
	var actions []string
	for _, a := range []string{"list", "describe", "delete", "delete-offsets", "reset-offsets", "migrate-to-kafka"} {
		if o.has(a) {
			actions = append(actions, "--"+a)
		}
	}
	if o.Export && !o.ResetOffsets {
		actions = append(actions, "--export")
	}
	if len(actions) != 1 {
		return errors.New("the command needs exactly one action: --list, --describe, --delete, --delete-offsets, --reset-offsets, --export or --migrate-to-kafka")
	}
	switch {
	case o.DeleteOffsets && o.BootstrapServer != "" && o.ZooKeeper != "":
		return errors.New("--delete-offsets takes --zookeeper for a ZooKeeper group or --bootstrap-server for a group coordinated by Kafka, not both")
	case o.DeleteOffsets && o.BootstrapServer != "":
	case o.ZooKeeper == "":
		return errors.New("missing required option --zookeeper")
	}
	if o.DryRun && o.Execute {
		return errors.New("--dry-run and --execute are mutually exclusive")
	}
	only := func(action bool, name string, opts ...string) error {
		if action {
			return nil
		}
		for _, opt := range opts {
			if o.has(opt) {
				return fmt.Errorf("--%s can only be used with %s", opt, name)
			}
		}
		return nil
	}
	for _, err := range []error{
		only(o.Describe, "--describe", "all-groups", "offsets", "members", "verbose"),
		only(o.Describe || o.List, "--describe or --list", "state"),
		only(o.ResetOffsets, "--reset-offsets", "all-topics", "to-earliest", "to-latest", "to-current", "to-offset", "shift-by", "to-datetime", "by-duration", "from-file"),
		only(o.ResetOffsets || o.MigrateToKafka, "--reset-offsets or --migrate-to-kafka", "dry-run", "execute"),
		only(o.Export && !o.ResetOffsets, "--export", "format", "output-file"),
		only(o.MigrateToKafka, "--migrate-to-kafka", "force"),
		only(o.MigrateToKafka || o.DeleteOffsets, "--migrate-to-kafka or --delete-offsets", "bootstrap-server"),
		only(o.Delete || o.ResetOffsets || o.DeleteOffsets, "--delete, --delete-offsets or --reset-offsets", "topic"),
	} {
		if err != nil {
			return err
		}
	}
	if len(o.Groups) > 1 && !o.Delete {
		return errors.New("--group can be given once, except with --delete")
	}
	needGroup := func(action string) error {
		if o.Group == "" {
			return fmt.Errorf("%s needs --group", action)
		}
		return nil
	}
	switch {
	case o.List:
		if _, err := parseStates(o.StateFilter); err != nil {
			return err
		}
	case o.Describe:
		if o.StateFilter != "" {
			return fmt.Errorf("--describe --state takes no states (%q): it shows the state of the group", o.StateFilter)
		}
		n := 0
		for _, v := range []bool{o.Offsets, o.Members, o.State} {
			if v {
				n++
			}
		}
		if n > 1 {
			return errors.New("--offsets, --members and --state are mutually exclusive")
		}
		if o.AllGroups == (o.Group != "") {
			return errors.New("--describe needs either --group or --all-groups")
		}
	case o.Delete:
		if o.Group == "" && len(o.Topics) == 0 {
			return errors.New("--delete needs --group, --topic, or both")
		}
		if len(o.Topics) > 1 {
			return errors.New("--delete takes one --topic")
		}
		if len(o.Topics) == 1 && strings.Contains(o.Topics[0], ":") {
			return errors.New("--delete takes a topic without partitions")
		}
	case o.DeleteOffsets:
		if err := needGroup("--delete-offsets"); err != nil {
			return err
		}
		if len(o.Topics) == 0 {
			return errors.New("--delete-offsets needs --topic")
		}
		if _, err := parseResetScope(false, o.Topics); err != nil {
			return err
		}
	case o.ResetOffsets:
		if err := needGroup("--reset-offsets"); err != nil {
			return err
		}
		specs := 0
		for _, s := range []string{"to-earliest", "to-latest", "to-current", "to-offset", "shift-by", "to-datetime", "by-duration", "from-file"} {
			if o.has(s) {
				specs++
			}
		}
		if specs != 1 {
			return errors.New("--reset-offsets needs exactly one of --to-earliest, --to-latest, --to-current, --to-offset, --shift-by, --to-datetime, --by-duration, --from-file")
		}
		if o.AllTopics && len(o.Topics) > 0 {
			return errors.New("--all-topics and --topic are mutually exclusive")
		}
		if !o.AllTopics && len(o.Topics) == 0 && o.FromFile == "" {
			return errors.New("--reset-offsets needs a scope: --all-topics or --topic (or --from-file)")
		}
		// Values are checked here, before anything is dialled, so that a
		// bad one is a usage error (exit 2) like any other.
		if o.has("to-datetime") {
			if _, err := groups.ParseDatetime(o.ToDatetime); err != nil {
				return fmt.Errorf("--to-datetime %q: %w", o.ToDatetime, err)
			}
		}
		if o.has("by-duration") {
			if _, err := groups.ParseISODuration(o.ByDuration); err != nil {
				return fmt.Errorf("--by-duration %q: %w", o.ByDuration, err)
			}
		}
		if _, err := parseResetScope(o.AllTopics, o.Topics); err != nil {
			return err
		}
	case o.Export:
		if err := needGroup("--export"); err != nil {
			return err
		}
		if o.Format != "csv" && o.Format != "zk" {
			return fmt.Errorf("--format must be csv or zk, not %q", o.Format)
		}
	case o.MigrateToKafka:
		if err := needGroup("--migrate-to-kafka"); err != nil {
			return err
		}
		if o.BootstrapServer == "" {
			return errors.New("--migrate-to-kafka needs --bootstrap-server")
		}
	}
	return nil
}
