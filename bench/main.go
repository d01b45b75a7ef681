// Command bench compares zkconsumer's consume throughput and CPU cost with
// sarama, franz-go, kcat (librdkafka) and Kafka 1.1.1's Scala consumer
// (kafka.tools.ConsumerPerformance --zookeeper), and zkconsumer's console
// consumer with kcat, on several message shapes, in alternating rounds
// against one cluster.
//
// It lives in a module of its own so that the library does not depend on
// franz-go. scripts/bench.sh runs it; by hand:
//
//	cd bench && go run . -rounds 5 -shapes p1,p12,1k,10k,lz4,zstd
//
// ZOOKEEPER_CONNECT and KAFKA_BROKERS name the cluster (as set by
// internal/testrig/cmd/zkcluster's env file). Topics are filled once per cluster
// and reused. Each measurement runs in a process of its own: the Go
// clients in a child of this binary (-child), kcat, the Scala consumer and
// the console consumer as their own programs, so that each one's CPU time
// is its own. In round r the clients of a shape start with the r-th one,
// so that no client always runs first or last.
//
// Clients: connector (zkconsumer, DefaultConfig; connector:<variant> for
// the settings in connectorVariants), sarama, franz (franz-go kgo), kcat,
// scala (Kafka 1.1.1's old consumer), console (cmd/zkconsumer-console-consumer,
// built once per run, or the binary named by BENCH_CONSOLE;
// console:<variant> for the --consumer-property settings in
// consoleVariants), and base: the connector run by the bench binary named
// by BENCH_BASE, built from another tree, to compare two versions of the
// library in the same rounds.
//
// A Go client's rate is measured from creating the client to its last
// message (the process start is not included); kcat's and the console
// consumer's from starting the process to its exit at the last message
// (-c N, --max-messages N); the Scala consumer's is the nMsg.sec it
// reports itself. CPU is the process's user+system time, per GB of value
// bytes (10^9).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"runtime/trace"
	"strings"
	"time"
)

func main() {
	child := flag.Bool("child", false, "internal: run one Go client read and print its result as JSON")
	client := flag.String("client", "", "internal (-child): connector, sarama or franz")
	topic := flag.String("topic", "", "internal (-child): topic to read")
	ends := flag.String("ends", "", "internal (-child): comma-separated end offset of each partition")
	variant := flag.String("variant", "", "internal (-child): connector settings, see connectorVariants")
	rounds := flag.Int("rounds", envInt("BENCH_ROUNDS", 5), "rounds (BENCH_ROUNDS)")
	shapes := flag.String("shapes", envStr("BENCH_SHAPES", "p1,p12,1k,10k,lz4,zstd"), "shapes to run (BENCH_SHAPES): "+shapeNames())
	clients := flag.String("clients", envStr("BENCH_CLIENTS", "connector,sarama,franz,kcat,console,scala"), "clients to run (BENCH_CLIENTS)")
	scale := flag.Float64("scale", envFloat("BENCH_SCALE", 1), "scale of the message counts (BENCH_SCALE)")
	out := flag.String("out", "", "also append every raw result, as JSON lines, to this file")
	cpuProfile := flag.String("cpuprofile", "", "(-child) write a CPU profile of the read to this file")
	traceFile := flag.String("trace", "", "(-child) write an execution trace of the read to this file")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *child {
		if *cpuProfile != "" {
			f, err := os.Create(*cpuProfile)
			if err != nil {
				fmt.Fprintln(os.Stderr, "bench:", err)
				os.Exit(1)
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				fmt.Fprintln(os.Stderr, "bench:", err)
				os.Exit(1)
			}
			defer pprof.StopCPUProfile()
		}
		if *traceFile != "" {
			f, err := os.Create(*traceFile)
			if err != nil {
				fmt.Fprintln(os.Stderr, "bench:", err)
				os.Exit(1)
			}
			if err := trace.Start(f); err != nil {
				fmt.Fprintln(os.Stderr, "bench:", err)
				os.Exit(1)
			}
			defer trace.Stop()
		}
		res, err := runChild(ctx, *client, *variant, *topic, *ends)
		if err != nil {
			pprof.StopCPUProfile()
			trace.Stop()
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		_ = json.NewEncoder(os.Stdout).Encode(res)
		return
	}
	env := clusterEnv{zk: os.Getenv("ZOOKEEPER_CONNECT"), brokers: strings.Split(os.Getenv("KAFKA_BROKERS"), ",")}
	if env.zk == "" || env.brokers[0] == "" {
		fmt.Fprintln(os.Stderr, "bench: ZOOKEEPER_CONNECT and KAFKA_BROKERS must name the cluster (source its env file)")
		os.Exit(2)
	}
	sel, err := selectShapes(*shapes)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	r := &runner{env: env, clients: strings.Split(*clients, ","), scale: *scale, rounds: *rounds}
	if *out != "" {
		f, err := os.OpenFile(*out, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		defer f.Close()
		r.raw = json.NewEncoder(f)
	}
	start := time.Now()
	if err := r.run(ctx, sel); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	fmt.Printf("\nbench took %v\n", time.Since(start).Round(time.Second))
}

func envStr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func envInt(key string, def int) int {
	var n int
	if _, err := fmt.Sscan(os.Getenv(key), &n); err == nil && n > 0 {
		return n
	}
	return def
}

func envFloat(key string, def float64) float64 {
	var f float64
	if _, err := fmt.Sscan(os.Getenv(key), &f); err == nil && f > 0 {
		return f
	}
	return def
}
