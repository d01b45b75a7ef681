package layering

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestApplicationCannotForgeMessages builds small programs in a module of
// their own, as an application outside this module would be, with the go
// tool (whose refusal to import another module's internal/ packages is the
// guarantee). A program that reads streams through connector alone must
// build; every program that tries to put a message of its own on a
// connector's stream must be refused at compile time.
func TestApplicationCannotForgeMessages(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go tool")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module forge.example\n\ngo 1.26.0\n\n"+
		"require github.com/zkconsumer/zkconsumer v0.0.0\n\n"+
		"replace github.com/zkconsumer/zkconsumer => "+root+"\n")
	write("go.sum", string(sum))

	programs := []struct {
		name    string
		src     string
		refusal string // "" if it must build
	}{
		{
			name: "reader", // the control: what an application does
			src: `package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkconsumer/zkconsumer/connector"
)

func consume(ctx context.Context, s *connector.KafkaStream) {
	for {
		msg, err := s.Next(ctx)
		if errors.Is(err, connector.ErrShutdown) || ctx.Err() != nil {
			return
		}
		if err == nil {
			show(msg)
			s.MarkConsumed(msg)
		}
	}
}

func show(m *connector.Message) { fmt.Println(m.Topic, m.Partition, m.Offset) }

func main() { _ = consume }
`,
		},
		{
			name: "queue", // the forgery: the stream's own queue
			src: `package main

import (
	"context"

	"github.com/zkconsumer/zkconsumer/connector"
	"github.com/zkconsumer/zkconsumer/stream"
)

func forge(ctx context.Context, s *connector.KafkaStream) error {
	p := stream.NewPartitionTopicInfo("orders", 99, s.Queue(), 0, 0, 1<<20)
	return p.Enqueue(ctx, []*stream.Message{{Topic: "orders", Partition: 99, Value: []byte("forged")}}, 1)
}

func main() { _ = forge }
`,
			refusal: "s.Queue undefined",
		},
		{
			name: "iterator", // the iterator is not reachable from a stream
			src: `package main

import "github.com/zkconsumer/zkconsumer/connector"

func forge(s *connector.KafkaStream) { _ = s.Iterator().Queue() }

func main() { _ = forge }
`,
			refusal: "s.Iterator undefined",
		},
		{
			name: "internal", // the producer side itself
			src: `package main

import "github.com/zkconsumer/zkconsumer/internal/streamcore"

func main() { _ = streamcore.NewPartitionTopicInfo }
`,
			refusal: "use of internal package",
		},
		{
			name: "stream", // the public stream package has no producer side
			src: `package main

import "github.com/zkconsumer/zkconsumer/stream"

func main() { _ = stream.NewKafkaStream }
`,
			refusal: "undefined: stream.NewKafkaStream",
		},
	}
	for _, p := range programs {
		write(p.name+"/main.go", p.src)
	}
	for _, p := range programs {
		t.Run(p.name, func(t *testing.T) {
			cmd := exec.Command("go", "build", "-o", os.DevNull, "./"+p.name)
			cmd.Dir = dir
			// Offline, from the module cache this module's build filled;
			// outside any workspace, as an application's module is.
			cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY=off", "GOTOOLCHAIN=local")
			out, err := cmd.CombinedOutput()
			switch {
			case p.refusal == "" && err != nil:
				t.Fatalf("an application reading streams through connector does not build: %v\n%s", err, out)
			case p.refusal != "" && err == nil:
				t.Fatalf("an application outside the module built a program that forges messages:\n%s", p.src)
			case p.refusal != "" && !strings.Contains(string(out), p.refusal):
				t.Fatalf("refused, but not for the expected reason (want %q):\n%s", p.refusal, out)
			}
		})
	}
}
