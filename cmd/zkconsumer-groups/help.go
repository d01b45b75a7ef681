package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// helpIntro is printed above the options.
const helpIntro = `List, describe, delete, reset, export and import the offsets of consumer groups
that use ZooKeeper (Kafka's old high-level consumer and zkconsumer). The options
are those of Kafka 1.1.1's kafka-consumer-groups.sh --zookeeper, plus what that
tool only offered for Kafka-based groups.

Examples:
  zkconsumer-groups --zookeeper zk:2181/kafka --list
  zkconsumer-groups --zookeeper zk:2181/kafka --describe --group G [--members|--state]
  zkconsumer-groups --zookeeper zk:2181/kafka --describe --all-groups
  zkconsumer-groups --zookeeper zk:2181/kafka --delete --group G [--topic T]
  zkconsumer-groups --zookeeper zk:2181/kafka --reset-offsets --group G --topic T:0,1 --to-earliest [--execute]
  zkconsumer-groups --zookeeper zk:2181/kafka --export --group G [--format csv|zk] [--output-file F]
  zkconsumer-groups --zookeeper zk:2181/kafka --reset-offsets --group G --from-file F --execute
  zkconsumer-groups --zookeeper zk:2181/kafka --migrate-to-kafka --group G --bootstrap-server B [--execute]

Exit status: 0 on success, 1 when the operation failed or was refused, 2 for
bad options.
`

// helpWidth is the column where descriptions start, and lineWidth the
// width they wrap at, as in Kafka's jopt-simple help.
const (
	helpWidth = 40
	lineWidth = 80
)

// printHelp writes the intro and every option, in alphabetical order, in
// Kafka's two-column layout.
func printHelp(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprint(w, helpIntro)
	fmt.Fprintf(w, "\n%-*s%s\n%-*s%s\n", helpWidth, "Option", "Description", helpWidth, "------", "-----------")
	fs.VisitAll(func(f *flag.Flag) {
		arg, usage := flag.UnquoteUsage(f)
		name := "--" + f.Name
		if _, isBool := f.Value.(interface{ IsBoolFlag() bool }); !isBool && arg != "" {
			name += " <" + arg + ">"
		}
		lines := wrap(usage, lineWidth-helpWidth-2)
		if len(name) >= helpWidth {
			fmt.Fprintln(w, name)
			name = ""
		}
		for i, l := range lines {
			if i == 0 {
				fmt.Fprintf(w, "%-*s%s\n", helpWidth, name, l)
			} else {
				fmt.Fprintf(w, "%-*s  %s\n", helpWidth, "", l)
			}
		}
	})
}

// wrap splits s into lines of at most width characters at spaces.
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		if line != "" && len(line)+1+len(word) > width {
			lines = append(lines, line)
			line = word
			continue
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	return append(lines, line)
}
