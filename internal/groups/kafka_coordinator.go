package groups

import (
	"errors"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/coordinator"
	"github.com/zkconsumer/zkconsumer/internal/secure"
)

// KafkaCoordinator returns a client of the group coordinator of group,
// reached through the bootstrap servers; timeout bounds each network step.
// sec, if not nil, secures the connections (--command-config). It connects
// on first use.
func KafkaCoordinator(bootstrap []string, group string, timeout time.Duration, sec *secure.Client) (*coordinator.Client, error) {
	if len(bootstrap) == 0 {
		return nil, errors.New("no bootstrap server")
	}
	return coordinator.New(group, func() (sarama.Client, error) {
		cfg := sarama.NewConfig()
		cfg.ClientID = "zkconsumer-groups"
		cfg.Version = sarama.V2_1_0_0
		cfg.Net.DialTimeout = timeout
		cfg.Net.ReadTimeout = timeout
		cfg.Net.WriteTimeout = timeout
		cfg.Metadata.Retry.Max = 1
		cfg.Metadata.Retry.Backoff = 250 * time.Millisecond
		cfg.Metadata.Full = false
		if sec != nil {
			sec.Apply(cfg)
		}
		cl, err := sarama.NewClient(bootstrap, cfg)
		return cl, sec.Explain(err)
	}, 5, 300*time.Millisecond), nil
}
