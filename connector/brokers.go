package connector

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/zkconsumer/zkconsumer/internal/fetch"
	"github.com/zkconsumer/zkconsumer/internal/secure"
	"github.com/zkconsumer/zkconsumer/internal/zkbrokers"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
)

// zkBrokers lists the brokers registered under /brokers/ids, using each
// broker's first endpoint of the configured security protocol (PLAINTEXT
// by default, as Kafka's old consumer does) or the configured listener. A broker
// whose registration cannot be read is skipped and reported, once for each
// distinct problem: the leader finder asks again every few hundred
// milliseconds.
type zkBrokers struct {
	zk interface {
		Children(ctx context.Context, path string) ([]string, error)
		Get(ctx context.Context, path string) ([]byte, zksession.Stat, error)
	}
	report func(error)
	// sec picks each broker's listener (security.protocol,
	// zkconsumer.listener.name).
	sec *secure.Client

	mu       sync.Mutex
	reported map[string]bool
}

func (b *zkBrokers) reportOnce(err error) {
	b.mu.Lock()
	seen := b.reported[err.Error()]
	if !seen {
		if b.reported == nil {
			b.reported = map[string]bool{}
		}
		b.reported[err.Error()] = true
	}
	b.mu.Unlock()
	if !seen {
		b.report(err)
	}
}

var _ fetch.BrokerSource = (*zkBrokers)(nil)

func (b *zkBrokers) Brokers(ctx context.Context) ([]fetch.BrokerInfo, error) {
	ids, err := b.zk.Children(ctx, zkbrokers.BrokerIDsPath)
	if err != nil {
		return nil, fmt.Errorf("connector: list brokers: %w", err)
	}
	out := make([]fetch.BrokerInfo, 0, len(ids))
	for _, s := range ids {
		id, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			b.reportOnce(fmt.Errorf("connector: broker id %q under %s is not a number", s, zkbrokers.BrokerIDsPath))
			continue
		}
		path := zkbrokers.BrokerIDPath(int32(id))
		data, _, err := b.zk.Get(ctx, path)
		if errors.Is(err, zksession.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("connector: read broker %s: %w", path, err)
		}
		br, err := zkbrokers.DecodeBroker(int32(id), path, data)
		if err != nil && !errors.Is(err, zkbrokers.ErrNoPlaintextEndpoint) {
			b.reportOnce(err)
			continue
		}
		ep, err := b.sec.Endpoint(br)
		if err != nil {
			b.reportOnce(fmt.Errorf("connector: %w", err))
			continue
		}
		out = append(out, fetch.BrokerInfo{ID: br.ID, Addr: ep.Addr()})
	}
	return out, nil
}
