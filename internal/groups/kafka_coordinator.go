package groups

import (
	"errors"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/coordinator"
)

// KafkaCoordinator returns a client of the group coordinator of group,
// reached through the bootstrap servers; timeout bounds each network step.
// It connects on first use.
func KafkaCoordinator(bootstrap []string, group string, timeout time.Duration) (*coordinator.Client, error) {
	if len(bootstrap) == 0 {
		return nil, errors.New("groups: no bootstrap server")
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
		return sarama.NewClient(bootstrap, cfg)
	}, 5, 300*time.Millisecond), nil
}
