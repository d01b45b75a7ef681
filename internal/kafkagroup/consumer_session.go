package kafkagroup

import (
	"fmt"
	"strconv"
	"time"

	"github.com/IBM/sarama"
)

// groupResource is the config resource type of a group (Kafka 4.0,
// KIP-848's group configs), which sarama does not name.
const groupResource sarama.ConfigResourceType = 32

// groupSessionConfig is the group config that holds the session timeout
// the coordinator enforces on the group's members: the broker's
// group.consumer.session.timeout.ms unless the group sets its own.
const groupSessionConfig = "consumer.session.timeout.ms"

// readSessionTimeout asks the cluster for the session timeout its
// coordinator enforces on this group (DescribeConfigs of the group, which
// also names the broker's default) and makes it the session timeout of
// the leases of generations started from now on. A value that differs
// from Config.SessionTimeout is logged once per value. When the cluster
// does not answer (no DESCRIBE_CONFIGS permission on the group, a
// request that failed), the member keeps the last value read, or
// Config.SessionTimeout, and says so.
func (p *consumer) readSessionTimeout() {
	m := p.m
	d, err := p.describeSessionTimeout()
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		if !p.sessionUnread {
			p.sessionUnread = true
			m.log.Warn("cannot read the group's session timeout from the cluster; the lease assumes session.timeout.ms",
				"session_timeout", p.sessionTimeout, "err", err)
		}
		return
	}
	p.sessionUnread = false
	if d != p.sessionTimeout && d != m.cfg.SessionTimeout {
		m.log.Warn("the group's session timeout on the broker differs from session.timeout.ms; the lease follows the broker's",
			"broker", fmt.Sprintf("%s=%d", groupSessionConfig, d.Milliseconds()), "session.timeout.ms", m.cfg.SessionTimeout.Milliseconds())
	}
	p.sessionTimeout = d
}

// describeSessionTimeout reads the group's consumer.session.timeout.ms.
func (p *consumer) describeSessionTimeout() (time.Duration, error) {
	m := p.m
	b, err := m.anyBroker()
	if err != nil {
		return 0, err
	}
	resp, err := b.DescribeConfigs(&sarama.DescribeConfigsRequest{Version: 1,
		Resources: []*sarama.ConfigResource{{Type: groupResource, Name: m.cfg.Group, ConfigNames: []string{groupSessionConfig}}}})
	if err != nil {
		m.brokerFailed(b, err)
		return 0, err
	}
	for _, r := range resp.Resources {
		if r.ErrorCode != 0 {
			return 0, fmt.Errorf("DescribeConfigs of group %s: %w", m.cfg.Group, sarama.KError(r.ErrorCode))
		}
		for _, c := range r.Configs {
			if c.Name != groupSessionConfig {
				continue
			}
			ms, err := strconv.ParseInt(c.Value, 10, 32)
			if err != nil || ms <= 0 {
				return 0, fmt.Errorf("DescribeConfigs of group %s: %s=%q is not a positive number of milliseconds", m.cfg.Group, groupSessionConfig, c.Value)
			}
			return time.Duration(ms) * time.Millisecond, nil
		}
	}
	return 0, fmt.Errorf("DescribeConfigs of group %s: no %s in the answer", m.cfg.Group, groupSessionConfig)
}
