package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The console client: cmd/zkconsumer-console-consumer, the port of Kafka 1.1.1's
// old console consumer, run as users run it (issue #13: "through the
// console consumer to /dev/null, wall time including start-up"):
//
//	zkconsumer-console-consumer --zookeeper ZK --topic T --from-beginning --max-messages N > /dev/null
//
// in a group it generates (console-consumer-<random>, deleted from
// ZooKeeper when it exits), timed from starting the process to its exit
// at the N-th message, as kcat with -c N.

// consoleVariants are the --consumer-property settings console:<variant>
// can name, after connectorVariants; the empty one is the defaults.
var consoleVariants = map[string][]string{
	"":                nil,
	"rcvbuf=os":       {"socket.receive.buffer.bytes=-1"},
	"rcvbuf=64k":      {"socket.receive.buffer.bytes=65536"},
	"rcvbuf=2m":       {"socket.receive.buffer.bytes=2097152"},
	"nocrc":           {"check.crcs=false"},
	"fetchers=2":      {"num.consumer.fetchers=2"},
	"rcvbuf=os+nocrc": {"socket.receive.buffer.bytes=-1", "check.crcs=false"},
	// Kafka mode: --bootstrap-server instead of --zookeeper, the group
	// coordinated by the broker (classic protocol).
	"kafka": nil,
}

// consoleBinary returns the console consumer to run: the binary named by
// BENCH_CONSOLE, or one built now from the zkconsumer module this bench
// resolves (the repository, by the bench module's replace directive),
// with that module's go.mod, as `go build ./cmd/zkconsumer-console-consumer`
// in the repository builds it. cleanup removes a built one.
func consoleBinary(ctx context.Context) (bin string, cleanup func(), err error) {
	if bin = os.Getenv("BENCH_CONSOLE"); bin != "" {
		return bin, func() {}, nil
	}
	var stderr bytes.Buffer
	list := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "github.com/zkconsumer/zkconsumer")
	list.Stderr = &stderr
	out, err := list.Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		return "", nil, fmt.Errorf("client console: finding the zkconsumer module (run in bench/ or the repository, or set BENCH_CONSOLE): %v %s", err, stderr.String())
	}
	tmp, err := os.MkdirTemp("", "zkbench-console-")
	if err != nil {
		return "", nil, err
	}
	cleanup = func() { _ = os.RemoveAll(tmp) }
	bin = filepath.Join(tmp, "zkconsumer-console-consumer")
	stderr.Reset()
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/zkconsumer-console-consumer")
	build.Dir, build.Stderr = dir, &stderr
	if err := build.Run(); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("client console: go build ./cmd/zkconsumer-console-consumer in %s: %v\n%s", dir, err, stderr.String())
	}
	return bin, cleanup, nil
}

// console times the console consumer reading d from the beginning to its
// exit after d.total messages, output to /dev/null, in ZooKeeper mode (in
// Kafka mode for the variant kafka). The read counts only
// if it exits with status 0 and reports "Processed a total of <d.total>
// messages", and prints nothing else on stderr but Kafka's deprecation
// warning of the old consumer.
func (r *runner) console(ctx context.Context, variant string, d *dataset) (*result, error) {
	props, ok := consoleVariants[variant]
	if !ok {
		return nil, fmt.Errorf("unknown console variant %q", variant)
	}
	if r.consoleBin == "" {
		return nil, errors.New("client console: no console-consumer binary")
	}
	args := []string{"--zookeeper", r.env.zk}
	if variant == "kafka" {
		args = []string{"--bootstrap-server", r.env.brokers[0]}
	}
	args = append(args, "--topic", d.topic, "--from-beginning", "--max-messages", strconv.FormatInt(d.total, 10))
	for _, p := range props {
		args = append(args, "--consumer-property", p)
	}
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	defer devNull.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, r.consoleBin, args...)
	cmd.Stdout, cmd.Stderr = devNull, &stderr
	// Stopped, it leaves its group and deletes it, as after Ctrl-C.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 40 * time.Second
	elapsed, first, hwm, err := runTimed(cmd, d.total == 1)
	if err != nil {
		return nil, fmt.Errorf("%s: %v\n%s", cmd, err, stderr.String())
	}
	want := fmt.Sprintf("Processed a total of %d messages", d.total)
	found := false
	for line := range strings.Lines(stderr.String()) {
		line = strings.TrimSpace(line)
		switch {
		case line == want:
			found = true
		case line == "", strings.HasPrefix(line, "Using the ConsoleConsumer with old consumer is deprecated"):
		default:
			return nil, fmt.Errorf("%s: unexpected output on stderr:\n%s", cmd, stderr.String())
		}
	}
	if !found {
		return nil, fmt.Errorf("%s: no %q on stderr:\n%s", cmd, want, stderr.String())
	}
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return &result{Client: "console", Variant: variant, Msgs: d.total, Bytes: d.total * int64(d.size),
		Seconds: elapsed.Seconds(), FirstMs: ms(first), CPU: cpu.Seconds(), RSSMB: float64(hwm) / 1e6, MinFlt: minorFaults(cmd.ProcessState),
		Rate: float64(d.total) / elapsed.Seconds()}, nil
}
