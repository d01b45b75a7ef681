package examples_test

import (
	"context"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// TestKafkaMode: the kafka-mode example, given only bootstrap.servers,
// reads what the topic holds on a first run and commits it to Kafka.
func TestKafkaMode(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, 3*time.Minute)
	bin, topic, group, produced := prepare(t, ctx, c, "kafka-mode", "smoke-kafkamode", 2, 20)

	p := start(t, ctx, bin, "-bootstrap", strings.Join(c.BrokerAddrs(), ","), "-topic", topic, "-group", group)
	p.waitLines(t, 20)
	p.interrupt(t)
	requireSeqs(t, p.lines(), topic, 0, 20)
	require.NotContains(t, p.stderr.String(), "consumer: ")
	require.Equal(t, endOffsets(produced), kafkaCommitted(t, c, group, topic, 2), "offsets committed to Kafka")
}

// TestProperties: the properties example runs on its sample file as the
// README says (-set zookeeper.connect=... for the test cluster), prints the
// warning of a key the connector does not know, reads what the topic holds
// on a first run, and stops on a value the connector refuses.
func TestProperties(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, 3*time.Minute)
	bin, topic, group, produced := prepare(t, ctx, c, "properties", "smoke-props", 2, 20)
	sample := filepath.Join(repoRoot(t), "examples", "properties", "consumer.properties")

	p := start(t, ctx, bin, "-config", sample, "-set", "zookeeper.connect="+c.ZKConnect(),
		"-set", "group.id="+group, "-set", "enable.auto.commit=true", "-topic", topic)
	p.waitLines(t, 20)
	p.interrupt(t)
	requireSeqs(t, p.lines(), topic, 0, 20)
	require.Contains(t, p.stderr.String(), "warning: ")
	require.Contains(t, p.stderr.String(), "auto.commit.enable", "the warning about enable.auto.commit")
	requireCommitted(t, ctx, c, group, map[string]testcluster.Produced{topic: produced})

	out, err := exec.CommandContext(ctx, bin, "-config", sample, "-set", "auto.offset.reset=earlist").CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "a refused value stops it; output:\n%s", out)
	require.Contains(t, string(out), "auto.offset.reset")
}

// readyRE matches the line where pause-resume names its readiness check.
var readyRE = regexp.MustCompile(`readiness check on (http://\S+/ready)`)

// TestPauseResume: with a work queue smaller than the topic, the
// pause-resume example pauses its partitions and resumes them, its
// readiness check answers 503 while they are paused and 200 while it
// consumes, and every message is printed once and committed.
func TestPauseResume(t *testing.T) {
	// Not parallel: its readiness check must be seen answering 503 in the
	// short windows while the partitions are paused, which a machine
	// loaded by the other tests can let it miss.
	c := testcluster.Shared(t)
	ctx := testwait.Context(t, 3*time.Minute)
	bin, topic, group, produced := prepare(t, ctx, c, "pause-resume", "smoke-pause", 2, 30)

	p := start(t, ctx, bin, "-zookeeper", c.ZKConnect(), "-topic", topic, "-group", group,
		"-queue", "4", "-work", "30ms", "-listen", "127.0.0.1:0")
	var url string
	testwait.WaitFor(t, time.Minute, func() bool {
		m := readyRE.FindStringSubmatch(p.stderr.String())
		if m != nil {
			url = m[1]
		}
		return m != nil
	}, "the readiness check's address; stderr:\n%s", &p.stderr)

	// Poll the readiness check while it runs.
	var mu sync.Mutex
	answers := map[string]bool{} // "status: body"
	pollCtx, stopPolling := context.WithCancel(ctx)
	var polling sync.WaitGroup
	polling.Go(func() {
		for pollCtx.Err() == nil {
			if a, err := ready(pollCtx, url); err == nil {
				mu.Lock()
				answers[a] = true
				mu.Unlock()
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
	defer func() {
		stopPolling()
		polling.Wait()
	}()

	p.waitLines(t, 30)
	testwait.WaitFor(t, time.Minute, func() bool {
		a, err := ready(ctx, url)
		return err == nil && a == "200: ready"
	}, "the readiness check to answer 200 once the queue drained")
	stopPolling()
	polling.Wait()
	p.interrupt(t)
	requireSeqs(t, p.lines(), topic, 0, 30)
	requireCommitted(t, ctx, c, group, map[string]testcluster.Produced{topic: produced})
	require.Contains(t, p.stderr.String(), "work queue full: paused 2 partitions")
	require.Contains(t, p.stderr.String(), "work queue empty: resumed 2 partitions")
	require.NotContains(t, p.stderr.String(), "consumer: ")
	require.True(t, answers["503: all 2 partitions paused: the work queue is full"],
		"the readiness check never answered 503 while paused: %v", answers)
	require.True(t, answers["200: ready"], "answers: %v", answers)
}

// ready asks the readiness check and returns "status: body".
func ready(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(strconv.Itoa(resp.StatusCode) + ": " + string(body)), nil
}

// endOffsets returns, per partition written to, the offset after the last
// message produced.
func endOffsets(pr testcluster.Produced) map[int32]int64 {
	out := map[int32]int64{}
	for p, offsets := range pr.Offsets {
		out[p] = offsets[len(offsets)-1] + 1
	}
	return out
}

// kafkaCommitted reads group's committed offsets of topic from its
// coordinator.
func kafkaCommitted(t *testing.T, c *testcluster.Cluster, group, topic string, partitions int32) map[int32]int64 {
	t.Helper()
	out, err := c.KafkaCommitted(group, topic, partitions)
	require.NoError(t, err)
	return out
}
