package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
)

func TestMain(m *testing.M) { testcluster.Main(m) }

// TestListensBesidePrometheus: the example serves /metrics on 2112 by
// default, not on 9090, the port of the Prometheus server that scrapes it.
func TestListensBesidePrometheus(t *testing.T) {
	out, _ := exec.Command("go", "run", ".", "-h").CombinedOutput() // -h exits non-zero
	usage := string(out)
	if !strings.Contains(usage, "-listen string") {
		t.Fatalf("no -listen flag in the usage:\n%s", usage)
	}
	if !strings.Contains(usage, `(default "localhost:2112")`) || strings.Contains(usage, "9090\")") {
		t.Errorf("the example's default -listen is not localhost:2112:\n%s", usage)
	}
}
