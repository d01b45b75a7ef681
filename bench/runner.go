package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
)

// runner runs the rounds and keeps the results.
type runner struct {
	env     clusterEnv
	clients []string // client names, a connector variant as connector:<variant>
	scale   float64
	rounds  int
	raw     *json.Encoder
	results []result
	// consoleBin is the console consumer the console client runs.
	consoleBin string
}

func (r *runner) run(ctx context.Context, shapes []shape) error {
	fmt.Printf("machine:  %s\n", machine())
	fmt.Printf("load:     %s (1/5/15 min, before)\n", loadavg())
	fmt.Printf("clients:  %s; shapes: %v; rounds: %d; scale %g\n", strings.Join(r.clients, ","), names(shapes), r.rounds, r.scale)
	for _, c := range r.clients {
		if name, _, _ := strings.Cut(c, ":"); name == "console" && r.consoleBin == "" {
			bin, cleanup, err := consoleBinary(ctx)
			if err != nil {
				return err
			}
			defer cleanup()
			r.consoleBin = bin
		}
	}
	var sets []*dataset
	for _, s := range shapes {
		d, err := prepare(ctx, r.env, s, r.scale)
		if err != nil {
			return fmt.Errorf("shape %s: %w", s.name, err)
		}
		sets = append(sets, d)
		// One untimed read with franz-go warms the broker (JIT, page
		// cache) for every client alike.
		if _, err := r.measure(ctx, "franz", d); err != nil {
			return fmt.Errorf("warm-up of %s: %w", s.name, err)
		}
	}
	for round := 1; round <= r.rounds; round++ {
		fmt.Printf("== round %d of %d (load %s)\n", round, r.rounds, loadavg())
		for _, d := range sets {
			for i := range r.clients {
				// Round r starts with client r-1 (mod n), and the order
				// is reversed every other round.
				k := (i + round - 1) % len(r.clients)
				if round%2 == 0 {
					k = (len(r.clients) - 1 - i + round - 1) % len(r.clients)
				}
				client := r.clients[k]
				if client == "scala" && d.codec == sarama.CompressionZSTD {
					// Kafka 1.1.1 predates zstd (Kafka 2.1, KIP-110): the
					// broker answers its fetch v3 with
					// UNSUPPORTED_COMPRESSION_TYPE.
					continue
				}
				res, err := r.measure(ctx, client, d)
				if err != nil {
					if ctx.Err() != nil {
						return ctx.Err()
					}
					// One failed read is reported and left out; the
					// rounds go on.
					fmt.Printf("%-5s %-22s FAILED: %.300s\n", d.name, client, err)
					continue
				}
				res.Shape, res.Round = d.name, round
				r.results = append(r.results, *res)
				if r.raw != nil {
					_ = r.raw.Encode(res)
				}
				fmt.Printf("%-5s %-22s %10.0f msgs/s %8.1f MB/s  cpu %6.2f s (%5.2f s/GB)  steady %10.0f msgs/s (%5.2f s/GB)  start-up %6.1f ms\n",
					d.name, label(client), res.Rate, res.Rate*float64(d.size)/1e6, res.CPU, cpuPerGB(*res),
					steadyRate(*res), steadyCPUPerGB(*res), res.FirstMs)
			}
		}
	}
	fmt.Printf("load:     %s (1/5/15 min, after)\n", loadavg())
	r.summary(sets)
	r.markdown(sets)
	return nil
}

func names(shapes []shape) []string {
	var out []string
	for _, s := range shapes {
		out = append(out, s.name)
	}
	return out
}

func label(client string) string { return client }

func cpuPerGB(r result) float64 {
	if r.Bytes == 0 {
		return 0
	}
	return r.CPU / (float64(r.Bytes) / 1e9)
}

// measure reads d once with client.
func (r *runner) measure(ctx context.Context, client string, d *dataset) (*result, error) {
	name, variant, _ := strings.Cut(client, ":")
	bin := os.Args[0]
	// Programs other than this one, each timed as a process of its own.
	external := map[string]func(context.Context, string, *dataset) (*result, error){
		"kcat": r.kcat, "console": r.console,
	}
	switch name {
	case "kcat", "console":
		res, err := external[name](ctx, variant, d)
		if err != nil {
			return nil, err
		}
		// A read of one message gives the start-up (to its first byte
		// of output) and the cost of starting and exiting, which the
		// steady figures take out.
		one := *d
		one.total = 1
		start, err := external[name](ctx, variant, &one)
		if err != nil {
			return nil, fmt.Errorf("start-up (one message): %w", err)
		}
		res.Client, res.FirstMs = client, start.FirstMs
		res.setSteady(start.Seconds, start.CPU)
		return res, nil
	case "scala":
		return r.scala(ctx, d)
	case "base":
		// The connector as built by another copy of this program, from
		// another tree (BENCH_BASE), for before/after comparisons.
		if bin = os.Getenv("BENCH_BASE"); bin == "" {
			return nil, errors.New("client base needs BENCH_BASE, the path of a bench binary built from the base tree")
		}
		name = "connector"
	}
	ends := make([]string, len(d.ends))
	for i, e := range d.ends {
		ends[i] = strconv.FormatInt(e, 10)
	}
	cmd := exec.CommandContext(ctx, bin, "-child", "-client", name, "-variant", variant,
		"-topic", d.topic, "-ends", strings.Join(ends, ","))
	if env, ok := childEnv[variant]; ok {
		cmd.Env = append(os.Environ(), env...)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%v: %s", err, stderr.String())
	}
	var res result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		return nil, fmt.Errorf("child output %q: %w", stdout.String(), err)
	}
	res.Client, res.MinFlt = client, minorFaults(cmd.ProcessState)
	res.setSteady(res.FirstMs/1000, 0)
	return &res, nil
}

// childEnv is the environment a variant adds to the child process: Go
// runtime settings, which a program (not a library) chooses.
var childEnv = map[string][]string{
	// The runtime returns freed heap pages with MADV_FREE instead of
	// MADV_DONTNEED, so reusing them does not fault them in again.
	"madvfree": {"GODEBUG=madvdontneed=0"},
	// Garbage collection at 4x the live heap instead of 2x.
	"gogc=400":          {"GOGC=400"},
	"madvfree+gogc=400": {"GODEBUG=madvdontneed=0", "GOGC=400"},
}

// kcatVariants are the librdkafka settings kcat:<variant> can name; the
// empty one is its defaults.
var kcatVariants = map[string][]string{
	"": nil,
	// The connector's default: check every batch's CRC-32C.
	"crc": {"-X", "check.crcs=true"},
}

// kcat times `kcat -C -b <broker> -t <topic> -o beginning -c <N> -e -q`,
// output to /dev/null, from starting the process to its exit at the N-th
// message.
func (r *runner) kcat(ctx context.Context, variant string, d *dataset) (*result, error) {
	extra, ok := kcatVariants[variant]
	if !ok {
		return nil, fmt.Errorf("unknown kcat variant %q", variant)
	}
	bin, err := exec.LookPath("kcat")
	if err != nil {
		return nil, errors.New("kcat not installed (apt-get install -y kcat)")
	}
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	defer devNull.Close()
	var stderr bytes.Buffer
	args := append([]string{"-C", "-b", r.env.brokers[0], "-t", d.topic, "-o", "beginning",
		"-c", strconv.FormatInt(d.total, 10), "-e", "-q"}, extra...)
	if d.total == 1 {
		args = append(args, "-u") // unbuffered: the message is written when read
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = devNull, &stderr
	elapsed, first, hwm, err := runTimed(cmd, d.total == 1)
	if err != nil || stderr.Len() > 0 {
		return nil, fmt.Errorf("%s: %v\n%s", cmd, err, stderr.String())
	}
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return &result{Client: "kcat", Msgs: d.total, Bytes: d.total * int64(d.size), Seconds: elapsed.Seconds(),
		FirstMs: ms(first), CPU: cpu.Seconds(), RSSMB: float64(hwm) / 1e6, MinFlt: minorFaults(cmd.ProcessState),
		Rate: float64(d.total) / elapsed.Seconds()}, nil
}

// scala runs Kafka 1.1.1's kafka.tools.ConsumerPerformance with the old
// consumer (--zookeeper), its defaults otherwise (10 streams, 1 fetcher
// thread, 1 MiB fetch size, 2 MiB socket buffer), in a fresh group, and
// takes the nMsg.sec it reports. Its CPU time includes the JVM's start.
func (r *runner) scala(ctx context.Context, d *dataset) (*result, error) {
	cmd, err := testcluster.OldTool(ctx, "kafka.tools.ConsumerPerformance",
		"--zookeeper", r.env.zk, "--topic", d.topic, "--messages", strconv.FormatInt(d.total, 10),
		"--group", fmt.Sprintf("zkbench-scala-%d", time.Now().UnixNano()))
	if err != nil {
		return nil, err
	}
	productionJVM(cmd)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	elapsed, _, hwm, err := runTimed(cmd, false)
	if err != nil {
		return nil, fmt.Errorf("ConsumerPerformance: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	// start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec
	var msgs int64
	var rate float64
	found := false
	for sc := bufio.NewScanner(&stdout); sc.Scan(); {
		f := strings.Split(sc.Text(), ", ")
		if len(f) < 6 || strings.HasPrefix(f[0], "start.time") {
			continue
		}
		n, err1 := strconv.ParseInt(strings.TrimSpace(f[4]), 10, 64)
		x, err2 := strconv.ParseFloat(strings.TrimSpace(f[5]), 64)
		if err1 == nil && err2 == nil {
			msgs, rate, found = n, x, true
		}
	}
	if !found || msgs < d.total {
		return nil, fmt.Errorf("ConsumerPerformance read %d of %d messages:\n%s\n%s", msgs, d.total, stdout.String(), stderr.String())
	}
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return &result{Client: "scala", Msgs: msgs, Bytes: msgs * int64(d.size), Seconds: elapsed.Seconds(),
		CPU: cpu.Seconds(), RSSMB: float64(hwm) / 1e6, MinFlt: minorFaults(cmd.ProcessState), Rate: rate}, nil
}

// runTimed starts cmd and waits for it. It returns the wall time from the
// start to its exit and its peak resident set size in bytes; with
// firstOutput, also the time to the first byte it writes on its standard
// output (which it then reads through a pipe and discards).
func runTimed(cmd *exec.Cmd, firstOutput bool) (elapsed, first time.Duration, hwm int64, err error) {
	var out *os.File
	firstAt := make(chan time.Time, 1)
	if firstOutput {
		r, w, err := os.Pipe()
		if err != nil {
			return 0, 0, 0, err
		}
		defer r.Close()
		cmd.Stdout, out = w, r
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		if out != nil {
			_ = cmd.Stdout.(*os.File).Close()
		}
		return 0, 0, 0, err
	}
	if out != nil {
		_ = cmd.Stdout.(*os.File).Close() // the child holds its own copy
		go func() {
			buf := make([]byte, 64<<10)
			n, _ := out.Read(buf)
			if n > 0 {
				firstAt <- time.Now()
			}
			close(firstAt)
			_, _ = io.Copy(io.Discard, out)
		}()
	}
	stop := testcluster.WatchPeakRSS(cmd.Process.Pid, &hwm)
	err = cmd.Wait()
	elapsed = time.Since(start)
	stop()
	if out != nil {
		if at, ok := <-firstAt; ok {
			first = at.Sub(start)
		} else if err == nil {
			err = errors.New("no output")
		}
	}
	return elapsed, first, hwm, err
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func machine() string {
	model := "?"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if rest, ok := strings.CutPrefix(line, "model name"); ok {
				model = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rest), ":"))
				break
			}
		}
	}
	cpus := 0
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		cpus = strings.Count(string(b), "processor\t:")
	}
	return fmt.Sprintf("%d CPUs, %s", cpus, model)
}

// productionJVM gives a tool's JVM the settings Kafka's scripts give it
// (kafka-run-class.sh: G1, both of HotSpot's compilers) instead of the
// serial collector and first compiler only that tests start tools with,
// so that the peer is measured as its users run it.
func productionJVM(cmd *exec.Cmd) {
	args := cmd.Args[:1:1]
	for _, a := range cmd.Args[1:] {
		switch a {
		case "-XX:TieredStopAtLevel=1":
		case "-XX:+UseSerialGC":
			args = append(args, "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20", "-XX:InitiatingHeapOccupancyPercent=35")
		default:
			args = append(args, a)
		}
	}
	cmd.Args = args
}
