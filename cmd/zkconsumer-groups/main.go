// Command zkconsumer-groups lists, describes, deletes, resets, exports and
// imports the offsets of ZooKeeper-based consumer groups, with the options
// of Kafka 1.1.1's kafka-consumer-groups.sh --zookeeper and, from later
// Kafka versions, --list --state, --describe --verbose and --delete-offsets
// (which also serves groups coordinated by Kafka, with --bootstrap-server).
// Run it with --help for the options, --version for its version.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
