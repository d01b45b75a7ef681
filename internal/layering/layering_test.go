package layering

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/zkconsumer/zkconsumer/"

// deps lists the non-test dependencies of pkg inside this module and
// whether it depends on anything outside the standard library.
func deps(t *testing.T, pkg string) (ours []string, nonStd []string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}}", module+pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", pkg, err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, std, _ := strings.Cut(line, " ")
		switch {
		case path == module+pkg:
		case strings.HasPrefix(path, module):
			ours = append(ours, strings.TrimPrefix(path, module))
		case std != "true":
			nonStd = append(nonStd, path)
		}
	}
	return ours, nonStd
}

func TestDependenciesFlowOneWay(t *testing.T) {
	rules := []struct {
		pkg       string
		forbidden []string // packages of ours it must not depend on
		stdOnly   bool
	}{
		{pkg: "stream", forbidden: []string{"zkutil", "rebalance", "fetcher", "connector", "internal/testrig/testcluster"}, stdOnly: true},
		{pkg: "internal/streamcore", forbidden: []string{"stream", "zkutil", "rebalance", "fetcher", "connector", "internal/testrig/testcluster"}, stdOnly: true},
		{pkg: "zkutil", forbidden: []string{"stream", "internal/streamcore", "rebalance", "fetcher", "connector", "internal/testrig/testcluster"}},
		// The public assignment functions: the assignors, never the member.
		{pkg: "rebalance", forbidden: []string{"fetcher", "stream", "internal/streamcore", "connector", "internal/zkgroup", "internal/kafkagroup", "internal/topicfilter", "internal/testrig/testcluster"}},
		// The names of the strategies both modes share: the standard library only.
		{pkg: "internal/strategyname", forbidden: []string{"zkutil", "rebalance", "internal/zkassign", "internal/zkgroup", "internal/kafkagroup", "fetcher", "stream", "connector", "internal/testrig/testcluster"}, stdOnly: true},
		// The ZooKeeper mode's assignors: pure functions, below the member
		// that runs them and the public package that wraps them.
		{pkg: "internal/zkassign", forbidden: []string{"rebalance", "internal/zkgroup", "internal/kafkagroup", "internal/topicfilter", "fetcher", "stream", "internal/streamcore", "connector", "internal/testrig/testcluster"}},
		// The ZooKeeper mode's member and claim protocol.
		{pkg: "internal/zkgroup", forbidden: []string{"rebalance", "internal/kafkagroup", "fetcher", "stream", "internal/streamcore", "connector", "internal/testrig/testcluster"}},
		{pkg: "internal/kafkagroup", forbidden: []string{"rebalance", "internal/zkgroup", "internal/zkassign", "fetcher", "stream", "internal/streamcore", "connector", "internal/testrig/testcluster"}},
		// Our own encoding of KIP-848's requests: the standard library only.
		{pkg: "internal/kip848", forbidden: []string{"zkutil", "stream", "rebalance", "internal/kafkagroup", "fetcher", "internal/fetch", "connector", "internal/testrig/testcluster"}, stdOnly: true},
		// The package doc of fetcher: it imports nothing.
		{pkg: "fetcher", forbidden: []string{"internal/fetch", "zkutil", "rebalance", "connector", "stream", "internal/streamcore", "internal/testrig/testcluster"}, stdOnly: true},
		// The fetching: below connector and rebalance, above the queues
		// it fills and zkutil's TopicPartition.
		{pkg: "internal/fetch", forbidden: []string{"fetcher", "rebalance", "internal/kafkagroup", "connector", "stream", "internal/zksession", "internal/testrig/testcluster"}},
		{pkg: "connector", forbidden: []string{"internal/testrig/testcluster"}},
		{pkg: "internal/coordinator", forbidden: []string{"stream", "rebalance", "fetcher", "internal/fetch", "connector", "internal/testrig/testcluster"}},
		{pkg: "internal/secure", forbidden: []string{"stream", "rebalance", "fetcher", "internal/fetch", "connector", "internal/testrig/testcluster"}},
		{pkg: "internal/grouperr", forbidden: []string{"zkutil", "stream", "rebalance", "fetcher", "internal/fetch", "connector", "internal/coordinator", "internal/testrig/testcluster"}},
		{pkg: "internal/offsetfetch", forbidden: []string{"stream", "rebalance", "fetcher", "internal/fetch", "connector", "internal/coordinator", "internal/testrig/testcluster"}},
		{pkg: "internal/grouplease", forbidden: []string{"zkutil", "stream", "rebalance", "fetcher", "internal/fetch", "connector", "internal/testrig/testcluster"}, stdOnly: true},
		// The lease core both leases share (zkutil's, internal/grouplease's):
		// nothing of ours, the standard library only.
		{pkg: "internal/lease", forbidden: []string{"zkutil", "internal/grouplease", "stream", "rebalance", "internal/kafkagroup", "fetcher", "internal/fetch", "connector", "internal/testrig/testcluster"}, stdOnly: true},
		// Java's string order and hash, which the assignors of both
		// coordination modes share: the standard library only.
		{pkg: "internal/javastr", forbidden: []string{"zkutil", "stream", "internal/streamcore", "rebalance", "internal/kafkagroup", "fetcher", "connector", "internal/testrig/testcluster"}, stdOnly: true},
		// The Java regex compiler of topic filters: the standard library only.
		{pkg: "internal/javaregex", forbidden: []string{"zkutil", "stream", "internal/streamcore", "rebalance", "internal/topicfilter", "internal/kafkagroup", "fetcher", "connector", "internal/testrig/testcluster"}, stdOnly: true},
		// The Java .properties parser behind connector.ParseProperties: the standard library only.
		{pkg: "internal/javaprops", forbidden: []string{"zkutil", "stream", "internal/streamcore", "rebalance", "internal/kafkagroup", "fetcher", "connector", "internal/testrig/testcluster"}, stdOnly: true},
		// Kafka's whitelist and blacklist, below both coordination modes.
		{pkg: "internal/topicfilter", forbidden: []string{"stream", "internal/streamcore", "rebalance", "internal/kafkagroup", "fetcher", "connector", "internal/testrig/testcluster"}},
		{pkg: "internal/abortdial", forbidden: []string{"zkutil", "stream", "rebalance", "fetcher", "connector", "internal/testrig/testcluster"}, stdOnly: true},
	}
	for _, r := range rules {
		ours, nonStd := deps(t, r.pkg)
		for _, dep := range ours {
			for _, f := range r.forbidden {
				if dep == f {
					t.Errorf("%s depends on %s", r.pkg, dep)
				}
			}
		}
		if r.stdOnly && len(nonStd) > 0 {
			t.Errorf("%s must use only the standard library, but depends on %v", r.pkg, nonStd)
		}
	}
}

// TestInternalImportsNoLayerAbove: no runtime package under internal/
// (the test rigs and these tests aside) depends on the top-level packages
// that are built on it: connector, rebalance, fetcher and stream. What
// such a package needs of them is declared below and re-exported above.
// zkutil, the ZooKeeper layer at the bottom of the module, is allowed.
func TestInternalImportsNoLayerAbove(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Deps \" \"}}", module+"internal/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	above := map[string]bool{}
	for _, p := range []string{"connector", "rebalance", "fetcher", "stream"} {
		above[module+p] = true
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, deps, _ := strings.Cut(line, " ")
		if strings.HasPrefix(pkg, module+"internal/testrig/") || pkg == module+"internal/layering" {
			continue
		}
		checked++
		for _, dep := range strings.Fields(deps) {
			if above[dep] {
				t.Errorf("%s depends on %s, a layer above it", strings.TrimPrefix(pkg, module), strings.TrimPrefix(dep, module))
			}
		}
	}
	if checked < 10 {
		t.Fatalf("only %d packages checked: go list printed\n%s", checked, out)
	}
}

// TestRigsStayApart keeps the test rigs (internal/testrig: the cluster
// harness and its command; chaos/, the fault-injection suite, a module of
// its own) out of everything a user builds: no package of the module
// outside the rigs depends on them, except the layering tests and
// examples/demo, the program behind `make demo`, which starts its own
// cluster.
func TestRigsStayApart(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Deps \" \"}}", module+"...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	rigs := module + "internal/testrig/"
	allowed := map[string]bool{module + "examples/demo": true, module + "internal/layering": true}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, deps, _ := strings.Cut(line, " ")
		if strings.HasPrefix(pkg, rigs) || strings.HasPrefix(pkg, module+"chaos") || allowed[pkg] {
			continue
		}
		checked++
		for _, dep := range strings.Fields(deps) {
			if strings.HasPrefix(dep, rigs) {
				t.Errorf("%s depends on the test rig %s", strings.TrimPrefix(pkg, module), strings.TrimPrefix(dep, module))
			}
		}
	}
	if checked < 10 {
		t.Fatalf("only %d packages checked: go list printed\n%s", checked, out)
	}
}
