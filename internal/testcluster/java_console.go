package testcluster

import (
	"bufio"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// JavaRecord is one record printed by Kafka's Java console consumer.
type JavaRecord struct {
	Partition int32
	Offset    int64
	Value     string
}

// JavaConsoleConsume runs Kafka 3.9's kafka-console-consumer (the Java
// KafkaConsumer, a broker-coordinated group member) on topic as a member of
// group, until no record has arrived for idle, and returns the records it
// printed. extra is appended to its arguments (e.g. --consumer-property
// auto.offset.reset=earliest). The consumer commits its position when it
// stops, as kafka-console-consumer.sh does.
func JavaConsoleConsume(ctx context.Context, bootstrap, topic, group string, idle time.Duration, extra ...string) ([]JavaRecord, error) {
	return javaConsoleConsume(ctx, RunTool, bootstrap, topic, group, idle, extra)
}

// JavaConsoleConsume4 is JavaConsoleConsume with Kafka 4.x's console
// consumer (RunTool4), with the same arguments. It speaks to Kafka 3.9 and
// 4.x brokers alike; extra may choose the group protocol
// (--consumer-property group.protocol=consumer, KIP-848, which needs a 4.x
// broker).
func JavaConsoleConsume4(ctx context.Context, bootstrap, topic, group string, idle time.Duration, extra ...string) ([]JavaRecord, error) {
	return javaConsoleConsume(ctx, RunTool4, bootstrap, topic, group, idle, extra)
}

type toolRunner func(ctx context.Context, mainClass string, args ...string) (string, error)

func javaConsoleConsume(ctx context.Context, run toolRunner, bootstrap, topic, group string, idle time.Duration, extra []string) ([]JavaRecord, error) {
	args := append([]string{
		"--bootstrap-server", bootstrap, "--topic", topic, "--group", group,
		"--property", "print.partition=true", "--property", "print.offset=true",
		"--timeout-ms", strconv.FormatInt(idle.Milliseconds(), 10),
	}, extra...)
	out, err := run(ctx, "org.apache.kafka.tools.consumer.ConsoleConsumer", args...)
	if err != nil {
		return nil, err
	}
	return parseJavaRecords(out)
}

// parseJavaRecords reads lines of the form "Partition:1\tOffset:42\t<value>".
// Kafka 4's notices about deprecated options ("Option --property is
// deprecated ..."), which it prints to stdout, are passed over.
func parseJavaRecords(out string) ([]JavaRecord, error) {
	var recs []JavaRecord
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "Option --") && strings.Contains(line, " is deprecated") {
			continue
		}
		fields := strings.SplitN(sc.Text(), "\t", 3)
		if len(fields) != 3 || !strings.HasPrefix(fields[0], "Partition:") || !strings.HasPrefix(fields[1], "Offset:") {
			return nil, fmt.Errorf("testcluster: unexpected console consumer line %q", sc.Text())
		}
		p, err1 := strconv.ParseInt(strings.TrimPrefix(fields[0], "Partition:"), 10, 32)
		off, err2 := strconv.ParseInt(strings.TrimPrefix(fields[1], "Offset:"), 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("testcluster: unexpected console consumer line %q", sc.Text())
		}
		recs = append(recs, JavaRecord{Partition: int32(p), Offset: off, Value: fields[2]})
	}
	return recs, sc.Err()
}
