package testcluster

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// JavaRecord is one record printed by Kafka's Java console consumer.
type JavaRecord struct {
	Partition int32
	Offset    int64
	Value     string
}

// javaFirstRecordGrace is how long JavaConsoleConsume waits for the first
// record: the JVM's start and the group join take seconds, many on a busy
// machine, and count against no idle time.
const javaFirstRecordGrace = 60 * time.Second

// JavaConsoleConsume runs Kafka 3.9's kafka-console-consumer (the Java
// KafkaConsumer, a broker-coordinated group member) on topic as a member of
// group, until no record has arrived for idle since the last one (or for a
// minute before the first), and returns the records it printed. It then
// stops the consumer with SIGTERM, on which it commits its position and
// leaves, as kafka-console-consumer.sh does on Ctrl-C. extra is appended to
// its arguments (e.g. --consumer-property auto.offset.reset=earliest).
func JavaConsoleConsume(ctx context.Context, bootstrap, topic, group string, idle time.Duration, extra ...string) ([]JavaRecord, error) {
	return javaConsoleConsume(ctx, Tool, bootstrap, topic, group, idle, extra)
}

// JavaConsoleConsume4 is JavaConsoleConsume with Kafka 4.x's console
// consumer (Tool4), with the same arguments. It speaks to Kafka 3.9 and
// 4.x brokers alike; extra may choose the group protocol
// (--consumer-property group.protocol=consumer, KIP-848, which needs a 4.x
// broker).
func JavaConsoleConsume4(ctx context.Context, bootstrap, topic, group string, idle time.Duration, extra ...string) ([]JavaRecord, error) {
	return javaConsoleConsume(ctx, Tool4, bootstrap, topic, group, idle, extra)
}

type toolCommand func(ctx context.Context, mainClass string, args ...string) (*exec.Cmd, error)

func javaConsoleConsume(ctx context.Context, tool toolCommand, bootstrap, topic, group string, idle time.Duration, extra []string) ([]JavaRecord, error) {
	const mainClass = "org.apache.kafka.tools.consumer.ConsoleConsumer"
	args := append([]string{
		"--bootstrap-server", bootstrap, "--topic", topic, "--group", group,
		"--property", "print.partition=true", "--property", "print.offset=true",
		// A backstop only: the idle time is measured here, from the
		// records as they are printed (the tool flushes each one).
		"--timeout-ms", strconv.FormatInt((javaFirstRecordGrace + idle).Milliseconds(), 10),
	}, extra...)
	cmd, err := tool(ctx, mainClass, args...)
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("testcluster: %s: %w", mainClass, err)
	}
	lines := make(chan string)
	var out strings.Builder
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	timer := time.NewTimer(javaFirstRecordGrace)
	defer timer.Stop()
	stopped := false
	for open := true; open; {
		select {
		case line, ok := <-lines:
			if !ok {
				open = false
				break
			}
			out.WriteString(line)
			out.WriteByte('\n')
			// Only a record starts the idle time: Kafka 4's tool prints
			// notices about deprecated options first, before it has
			// joined the group (a notice used to leave a busy machine's
			// consumer the idle time alone to join and fetch: 0 records).
			if !stopped && strings.HasPrefix(line, "Partition:") {
				timer.Reset(idle)
			}
		case <-timer.C:
			if !stopped {
				stopped = true
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
			}
		}
	}
	if err := cmd.Wait(); err != nil && !stopped {
		return nil, fmt.Errorf("testcluster: %s: %w\n%s", mainClass, err, stderr.String())
	}
	return parseJavaRecords(out.String())
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
