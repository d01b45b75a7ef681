package connector

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/zkconsumer/zkconsumer/internal/streamcore"
	"github.com/zkconsumer/zkconsumer/internal/topicfilter"
	"github.com/zkconsumer/zkconsumer/internal/zkassign"
	"github.com/zkconsumer/zkconsumer/internal/zkgroup"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// TopicFilter selects topics by regex for CreateMessageStreamsByFilter:
// Kafka's Whitelist and Blacklist. The regex is a java.util.regex pattern,
// munged as Kafka munges it (commas become '|', spaces and surrounding
// quotes are removed), and must match a whole topic name (Java's
// String.matches).
type TopicFilter struct {
	pattern string
	regex   string
}

// Whitelist consumes every topic whose name matches regex.
func Whitelist(regex string) TopicFilter {
	return TopicFilter{pattern: zkutil.PatternWhitelist, regex: regex}
}

// Blacklist consumes every topic whose name does not match regex.
func Blacklist(regex string) TopicFilter {
	return TopicFilter{pattern: zkutil.PatternBlacklist, regex: regex}
}

// Validate compiles the filter's regex as CreateMessageStreamsByFilter
// would, without connecting: a regex Java would reject, or whose meaning
// Go's regexp cannot reproduce, is refused with a *RegexError naming the
// construct (Kafka's TopicFilter refuses it up front too).
func (f TopicFilter) Validate() error {
	_, err := topicfilter.New(f.pattern, f.regex)
	return regexError(err)
}

// CreateMessageStreams joins the group with a static subscription: for
// each topic, the number of streams to consume it with. It registers under
// /consumers/<group>/ids, runs the first rebalance and returns the streams
// by topic. Partitions are spread over the streams of all members by
// partition.assignment.strategy. It may be called once per connector.
//
// When the first rebalance fails rebalance.max.retries times (Kafka's
// connector throws ConsumerRebalanceFailedException), the streams are
// returned all the same and the member keeps trying in the background, as
// it does for later rebalances; Assignment().Err then wraps
// ErrRebalanceFailed, and the failure is reported on Errors.
//
// In Kafka mode it returns once the first generation has started. Joins
// that fail meanwhile are retried, and reported on Errors once they have
// failed for a few seconds (an unreachable bootstrap.servers or
// coordinator, a coordinator that cannot be found), at most every 30
// seconds. An unrecoverable group error (ErrGroupFatal) is returned at
// once: among them a connection the brokers refused to authenticate or
// whose TLS handshake failed (ErrAuthentication), which names the setting
// to fix. When ctx ends first, the error wraps both context.Cause(ctx)
// and the last failure. Either way the member has left the group (a
// static member, with group.instance.id, does not leave, as in Java)
// and nothing of the attempt keeps running, so CreateMessageStreams may
// be called again. The same holds in ZooKeeper mode when the member
// cannot register (ctx ends first, ZooKeeper refuses the node): its
// registration, if made, is deleted.
func (c *ConsumerConnector) CreateMessageStreams(ctx context.Context, topicCountMap map[string]int) (map[string][]*KafkaStream, error) {
	sub := zkgroup.StaticSubscription(topicCountMap)
	if err := sub.Validate(); err != nil {
		return nil, fmt.Errorf("connector: %w", err)
	}
	out := map[string][]*streamcore.KafkaStream{}
	streams := map[streamKey]*streamcore.Control{}
	for topic, n := range topicCountMap {
		for i := range n {
			s, ctl, err := c.newStream()
			if err != nil {
				return nil, err
			}
			streams[streamKey{topic, i}] = ctl
			out[topic] = append(out[topic], s)
		}
	}
	if err := c.join(ctx, sub, streams, false); err != nil {
		return nil, err
	}
	return out, nil
}

// CreateMessageStreamsByFilter joins the group with a wildcard
// subscription: numStreams streams shared by every topic filter admits, now
// or created later. With exclude.internal.topics, Kafka's internal topics
// are never admitted. A pattern that Java's Pattern would refuse, or whose
// meaning Go's regexp cannot reproduce (class intersection, possessive
// quantifiers, look-around, back-references, Unicode properties, ...), is
// refused with a *RegexError that names the construct.
//
// With group.protocol=consumer (KIP-848) the broker evaluates the filter
// itself, with RE2/J, which reads regexes as Go's regexp does: the member
// sends the whitelist translated to RE2/J's syntax with Java's meaning,
// and the broker assigns the
// partitions of every topic it matches, including topics created later.
// Such a pattern is refused with a *ConfigError (key group.protocol)
// instead, and so are a blacklist, which RE2/J cannot express (it has no
// look-ahead), and, while exclude.internal.topics holds, a whitelist that
// matches one of Kafka's internal topics (__consumer_offsets,
// __transaction_state, __share_group_state), which the broker would
// assign.
func (c *ConsumerConnector) CreateMessageStreamsByFilter(ctx context.Context, filter TopicFilter, numStreams int) ([]*KafkaStream, error) {
	f, err := topicfilter.New(filter.pattern, filter.regex)
	if err != nil {
		if c.cfg.consumerProtocol() {
			return nil, brokerRegexRefused(&c.cfg, err, true)
		}
		return nil, fmt.Errorf("connector: %w", regexError(err))
	}
	if c.cfg.consumerProtocol() {
		if _, err := brokerTopicRegex(&c.cfg, f); err != nil {
			return nil, err
		}
	}
	sub := zkgroup.WildcardSubscription(f, numStreams)
	if err := sub.Validate(); err != nil {
		return nil, fmt.Errorf("connector: %w", err)
	}
	out := make([]*streamcore.KafkaStream, numStreams)
	streams := map[streamKey]*streamcore.Control{}
	for i := range out {
		var ctl *streamcore.Control
		if out[i], ctl, err = c.newStream(); err != nil {
			return nil, err
		}
		streams[streamKey{"", i}] = ctl
	}
	if err := c.join(ctx, sub, streams, true); err != nil {
		return nil, err
	}
	return out, nil
}

// newStream returns a stream for the application and its Control, which
// the connector keeps.
func (c *ConsumerConnector) newStream() (*streamcore.KafkaStream, *streamcore.Control, error) {
	s, ctl, err := streamcore.NewKafkaStream(c.cfg.QueuedMaxMessageChunks, c.cfg.ConsumerTimeout)
	if err != nil {
		return nil, nil, fmt.Errorf("connector: %w", err)
	}
	return s, ctl, nil
}

// join registers the member and runs its first rebalance.
func (c *ConsumerConnector) join(ctx context.Context, sub zkgroup.Subscription, streams map[streamKey]*streamcore.Control, wildcard bool) error {
	format, err := zkassign.ParseRoundRobinHashFormat(c.cfg.RoundRobinHashFormat.String())
	if err != nil {
		return fmt.Errorf("connector: %w", err)
	}
	var assignor zkassign.Assignor
	if c.kafka == nil { // Kafka mode's assignors are the group member's
		if assignor, err = zkassign.NewAssignor(formatStrategies(c.cfg.PartitionAssignmentStrategy), zkassign.WithRoundRobinHashFormat(format)); err != nil {
			return fmt.Errorf("connector: %w", err)
		}
	}
	c.mu.Lock()
	if c.shutdown {
		c.mu.Unlock()
		return ErrShutdown
	}
	if c.created {
		c.mu.Unlock()
		return ErrStreamsExist
	}
	c.created = true
	c.streams = maps.Clone(streams)
	c.wildcard = wildcard
	c.mu.Unlock()
	if c.kafka != nil {
		if err := c.kafka.join(ctx, sub); err != nil {
			// Nothing of the attempt stays (kafkaGroup.join): the
			// streams may be created again.
			c.mu.Lock()
			c.created, c.streams, c.wildcard = false, map[streamKey]*streamcore.Control{}, false
			c.mu.Unlock()
			return err
		}
		c.startAutoCommit()
		return nil
	}

	member, err := zkgroup.NewMember(zkgroup.Session(c.session), zkgroup.MemberConfig{
		Group:                 c.cfg.GroupID,
		ConsumerID:            c.id,
		Subscription:          sub,
		ExcludeInternalTopics: c.cfg.ExcludeInternalTopics,
		Assignor:              assignor,
		MaxRetries:            c.cfg.RebalanceMaxRetries,
		Backoff:               c.cfg.RebalanceBackoff,
		SessionTimeout:        c.cfg.ZooKeeperSessionTimeout,
		Handler:               (*handler)(c),
		Incremental:           c.cfg.RebalanceProtocol == RebalanceCooperative,
		Logger:                c.baseLog,
		OnError:               c.report,
		OnRebalance:           c.onRebalance(),
	})
	if err != nil {
		return fmt.Errorf("connector: %w", err)
	}
	c.mu.Lock()
	c.member = member
	c.mu.Unlock()
	if err := member.Start(ctx); err != nil {
		// The member could not register. Nothing of the attempt stays (a
		// registration whose create went out is deleted), and the streams
		// may be created again.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.cfg.ZooKeeperSessionTimeout)
		closeErr := member.Close(cctx)
		cancel()
		c.mu.Lock()
		c.member = nil
		c.created, c.streams, c.wildcard = false, map[streamKey]*streamcore.Control{}, false
		c.mu.Unlock()
		return fmt.Errorf("connector: join group %s: %w", c.cfg.GroupID, errors.Join(err, closeErr))
	}
	c.startAutoCommit()
	return nil
}

// startAutoCommit starts the automatic commits, with auto.commit.enable.
func (c *ConsumerConnector) startAutoCommit() {
	if c.cfg.AutoCommitEnable {
		c.autoCommit.Add(1)
		go c.autoCommitLoop()
	}
}

// streamFor returns the stream that consumes topic for thread.
func (c *ConsumerConnector) streamFor(topic string, thread int) *streamcore.Control {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.wildcard {
		topic = ""
	}
	return c.streams[streamKey{topic, thread}]
}
