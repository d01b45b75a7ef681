package connector

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/abortdial"
	"github.com/zkconsumer/zkconsumer/internal/fetch"
	"github.com/zkconsumer/zkconsumer/internal/secure"
)

// brokersMaxAge is how long kafkaBrokers reuses the broker list it read.
const brokersMaxAge = 5 * time.Second

// kafkaBrokers lists the cluster's brokers from Kafka's metadata, asking
// the brokers of bootstrap.servers (and those it learnt of) in turn: the
// BrokerSource of Kafka mode, in place of ZooKeeper's /brokers/ids. The
// list is kept for brokersMaxAge, and the last good one is used while no
// broker answers.
type kafkaBrokers struct {
	seeds   []string
	timeout time.Duration  // dial, write and read
	base    *sarama.Config // without security: ask applies it around its own dialer
	sec     *secure.Client
	dial    Dialer // WithDialer, nil for direct connections

	mu   sync.Mutex
	last []fetch.BrokerInfo
	at   time.Time
}

var _ fetch.BrokerSource = (*kafkaBrokers)(nil)

func newKafkaBrokers(cfg Config, sec *secure.Client, dial Dialer) *kafkaBrokers {
	sc := brokerSaramaConfig(nil, cfg.SocketTimeout, nil) // its version is lowered per connection to what the broker speaks
	sc.ClientID = cfg.ClientID
	return &kafkaBrokers{seeds: cfg.brokerList(), timeout: cfg.SocketTimeout, base: sc, sec: sec, dial: dial}
}

// Brokers returns the live brokers, reading them again when the list is
// older than brokersMaxAge.
func (b *kafkaBrokers) Brokers(ctx context.Context) ([]fetch.BrokerInfo, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.last) > 0 && time.Since(b.at) < brokersMaxAge {
		return slices.Clone(b.last), nil
	}
	addrs := slices.Clone(b.seeds)
	rand.Shuffle(len(addrs), func(i, j int) { addrs[i], addrs[j] = addrs[j], addrs[i] })
	for _, br := range b.last {
		if !slices.Contains(addrs, br.Addr) {
			addrs = append(addrs, br.Addr)
		}
	}
	var errs []error
	for _, addr := range addrs {
		list, err := b.ask(ctx, addr)
		err = b.sec.Explain(err)
		if err == nil && len(list) > 0 {
			b.last, b.at = list, time.Now()
			return slices.Clone(list), nil
		}
		if err == nil {
			err = errors.New("no broker listed")
		}
		errs = append(errs, fmt.Errorf("%s: %w", addr, err))
		if ctx.Err() != nil {
			break
		}
	}
	if len(b.last) > 0 {
		return slices.Clone(b.last), nil
	}
	return nil, fmt.Errorf("connector: list brokers through bootstrap.servers: %w", errors.Join(errs...))
}

// ask reads the broker list from the broker at addr, giving up when ctx
// ends. It asks for the metadata of one small internal topic only, which
// every answer lists the brokers with, rather than of every topic.
func (b *kafkaBrokers) ask(ctx context.Context, addr string) ([]fetch.BrokerInfo, error) {
	conf := *b.base
	conf.Net.DialTimeout, conf.Net.ReadTimeout, conf.Net.WriteTimeout = b.timeout, b.timeout, b.timeout
	// Closing the connection is the only way to end a request sarama is
	// blocked in.
	d := abortdial.New(b.timeout, 0, context.Canceled)
	if b.dial != nil {
		d = abortdial.Through(saramaDialer{d: b.dial, timeout: b.timeout}, context.Canceled)
	}
	conf.Net.Proxy.Enable, conf.Net.Proxy.Dialer = true, d
	b.sec.Apply(&conf) // TLS and SASL around the aborting dialer
	stop := context.AfterFunc(ctx, d.Abort)
	defer stop()
	br := sarama.NewBroker(addr)
	if err := br.Open(&conf); err != nil {
		return nil, err
	}
	defer func() { _ = br.Close() }()
	req := sarama.NewMetadataRequest(conf.Version, []string{"__consumer_offsets"})
	req.AllowAutoTopicCreation = false
	resp, err := br.GetMetadata(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, err
	}
	out := make([]fetch.BrokerInfo, 0, len(resp.Brokers))
	for _, mb := range resp.Brokers {
		out = append(out, fetch.BrokerInfo{ID: mb.ID(), Addr: mb.Addr()})
	}
	slices.SortFunc(out, func(x, y fetch.BrokerInfo) int { return int(x.ID) - int(y.ID) })
	return out, nil
}
