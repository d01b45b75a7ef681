package fetch

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
)

// testConfig is DefaultConfig with short backoffs, logging to t.
func testConfig(t testing.TB) Config {
	c := DefaultConfig()
	c.ClientID = "zkconsumer-fetcher-test"
	c.RefreshLeaderBackoff = 50 * time.Millisecond
	c.SocketTimeout = 10 * time.Second
	c.Logger = testLogger(t)
	return c
}

// collector reads streams concurrently and records what they hand out.
type collector struct {
	mu     sync.Mutex
	msgs   []*streamcore.Message
	errs   []error
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// collect starts one reader per stream until stop is called.
func collect(streams ...*streamcore.KafkaStream) *collector {
	ctx, cancel := context.WithCancel(context.Background())
	c := &collector{cancel: cancel}
	for _, s := range streams {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			for {
				m, err := s.Next(ctx)
				switch {
				case err == nil:
					c.mu.Lock()
					c.msgs = append(c.msgs, m)
					c.mu.Unlock()
				case errors.Is(err, streamcore.ErrConsumerTimeout):
				case ctx.Err() != nil || errors.Is(err, streamcore.ErrShutdown):
					return
				default:
					c.mu.Lock()
					c.errs = append(c.errs, err)
					c.mu.Unlock()
				}
			}
		}()
	}
	return c
}

func (c *collector) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.msgs)
}

func (c *collector) errors() []error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]error(nil), c.errs...)
}

// stop ends the readers and returns the messages.
func (c *collector) stop() []*streamcore.Message {
	c.cancel()
	c.wg.Wait()
	return c.msgs
}

func newStream(t testing.TB, capacity int) *streamcore.KafkaStream {
	t.Helper()
	s, _ := newStreamControl(t, capacity)
	return s
}

// newStreamControl is newStream that also returns the stream's Control.
func newStreamControl(t testing.TB, capacity int) (*streamcore.KafkaStream, *streamcore.Control) {
	t.Helper()
	s, ctl, err := streamcore.NewKafkaStream(capacity, -1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ctl.Shutdown)
	return s, ctl
}

// testLogger logs to t: warnings, Info too with -v, everything with
// FETCHER_DEBUG set in the environment.
func testLogger(t testing.TB) *slog.Logger {
	level := slog.LevelWarn
	if os.Getenv("FETCHER_DEBUG") != "" {
		return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if testing.Verbose() {
		level = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: level}))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(p[:len(p)-1]))
	return len(p), nil
}
