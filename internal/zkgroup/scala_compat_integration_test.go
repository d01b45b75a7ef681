package zkgroup

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
	"github.com/zkconsumer/zkconsumer/internal/topicfilter"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// TestRegistrationBytesMatchScala starts Kafka 1.1.1's own consumers, reads
// the registrations they write, and checks that ours for the same
// subscription and timestamp are the same bytes.
func TestRegistrationBytesMatchScala(t *testing.T) {
	t.Parallel()
	c := testcluster.Shared(t)
	observer := dialObserver(t, c)
	topic := newTopic(t, c, 2)

	cases := []struct {
		name string
		args []string
		sub  func() Subscription
	}{
		{
			name: "whitelist (ConsoleConsumer)",
			args: []string{"kafka.tools.ConsoleConsumer", "--whitelist", topic + "|other-.*", "--timeout-ms", "20000"},
			sub: func() Subscription {
				f, err := topicfilter.New(zkutil.PatternWhitelist, topic+"|other-.*")
				require.NoError(t, err)
				return WildcardSubscription(f, 1)
			},
		},
		{
			name: "static with 3 streams (ConsumerPerformance)",
			args: []string{"kafka.tools.ConsumerPerformance", "--topic", topic, "--threads", "3", "--messages", "1000000"},
			sub:  func() Subscription { return StaticSubscription(map[string]int{topic: 3}) },
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			group := testcluster.UniqueName("g-scala-reg")
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			args := append([]string{"--zookeeper", c.ZKConnect(), "--group", group}, tc.args[1:]...)
			cmd, err := testcluster.OldTool(ctx, tc.args[0], args...)
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			defer func() {
				cancel()
				_ = cmd.Wait()
			}()

			var scala []byte
			require.True(t, testwait.Until(90*time.Second, func() bool {
				ids, err := observer.Children(ctx, zkutil.ConsumerIDsPath(group))
				if err != nil || len(ids) == 0 {
					return false
				}
				scala, _, err = observer.Get(ctx, zkutil.ConsumerIDPath(group, ids[0]))
				return err == nil
			}), "the Scala consumer registered")
			reg, err := zkutil.DecodeRegistration("scala", scala)
			require.NoError(t, err)
			ours, err := zkutil.EncodeRegistration(tc.sub().Registration(time.UnixMilli(reg.Timestamp)))
			require.NoError(t, err)
			require.Equal(t, string(scala), string(ours))
			require.True(t, strings.HasPrefix(string(scala), `{"version":1,"subscription":{`), "%s", scala)
			t.Logf("Scala 1.1.1 wrote %s", scala)
		})
	}
}
