package main

import (
	"flag"
	"io"

	"github.com/zkconsumer/zkconsumer/internal/cmdhelp"
)

// toolName is the command's name in its help and --version.
const toolName = "zkconsumer-groups"

// helpIntro is printed above the options.
const helpIntro = `List, describe, delete, reset, export and import the offsets of consumer groups
that use ZooKeeper (Kafka's old high-level consumer and zkconsumer). The options
are those of Kafka 1.1.1's kafka-consumer-groups.sh --zookeeper, plus what that
tool only offered for Kafka-based groups.

Examples:
  zkconsumer-groups --zookeeper zk:2181/kafka --list [--state [Stable,Empty]]
  zkconsumer-groups --zookeeper zk:2181/kafka --describe --group G [--members|--state] [--verbose]
  zkconsumer-groups --zookeeper zk:2181/kafka --describe --all-groups
  zkconsumer-groups --zookeeper zk:2181/kafka --delete --group G [--topic T]
  zkconsumer-groups --zookeeper zk:2181/kafka --delete-offsets --group G --topic T[:0,1]
  zkconsumer-groups --bootstrap-server B --delete-offsets --group G --topic T[:0,1]
  zkconsumer-groups --zookeeper zk:2181/kafka --reset-offsets --group G --topic T:0,1 --to-earliest [--execute]
  zkconsumer-groups --zookeeper zk:2181/kafka --export --group G [--format csv|zk] [--output-file F]
  zkconsumer-groups --zookeeper zk:2181/kafka --reset-offsets --group G --from-file F --execute
  zkconsumer-groups --zookeeper zk:2181/kafka --migrate-to-kafka --group G --bootstrap-server B [--execute]

Exit status: 0 on success, 1 when the operation failed or was refused, 2 for
bad options.

`

// printHelp writes the intro and every option, in alphabetical order, in
// Kafka's two-column layout.
func printHelp(w io.Writer, fs *flag.FlagSet) {
	_ = cmdhelp.Print(w, helpIntro, fs)
}
