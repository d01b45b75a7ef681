package groups

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/IBM/sarama"
)

// KafkaGroup speaks to the group coordinator of one consumer group: the
// group's state and its offsets in __consumer_offsets. It commits the way
// Kafka's old consumer did with offsets.storage=kafka, as a client outside
// the group (generation -1, no member id), which the coordinator accepts
// only while the group has no members.
type KafkaGroup struct {
	group   string
	client  sarama.Client
	retries int
	backoff time.Duration
}

// ErrKafkaGroupActive is returned when the Kafka-side group has members:
// its offsets belong to them and the coordinator would refuse a commit from
// outside the group.
var ErrKafkaGroupActive = errors.New("groups: the group has members in Kafka")

// DialKafkaGroup connects to the cluster through bootstrap and finds the
// coordinator of group. timeout bounds each network step.
func DialKafkaGroup(ctx context.Context, bootstrap []string, group string, timeout time.Duration) (*KafkaGroup, error) {
	if len(bootstrap) == 0 {
		return nil, errors.New("groups: no bootstrap server")
	}
	cfg := sarama.NewConfig()
	cfg.ClientID = "zkconsumer-groups"
	cfg.Version = sarama.V2_1_0_0
	cfg.Net.DialTimeout = timeout
	cfg.Net.ReadTimeout = timeout
	cfg.Net.WriteTimeout = timeout
	cfg.Metadata.Retry.Max = 2
	cfg.Metadata.Retry.Backoff = 250 * time.Millisecond
	cfg.Metadata.Full = false
	type result struct {
		c   sarama.Client
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, err := sarama.NewClient(bootstrap, cfg)
		done <- result{c, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, fmt.Errorf("groups: connect to Kafka at %v: %w", bootstrap, r.err)
		}
		return &KafkaGroup{group: group, client: r.c, retries: 10, backoff: 300 * time.Millisecond}, nil
	case <-ctx.Done():
		go func() {
			if r := <-done; r.c != nil {
				_ = r.c.Close()
			}
		}()
		return nil, fmt.Errorf("groups: connect to Kafka at %v: %w", bootstrap, context.Cause(ctx))
	}
}

// Close closes the connections to the cluster.
func (k *KafkaGroup) Close() error { return k.client.Close() }

// KafkaGroupState is the coordinator's view of a group.
type KafkaGroupState struct {
	// State is Kafka's group state: Empty, Stable, PreparingRebalance,
	// CompletingRebalance, or Dead for a group the coordinator does not know.
	State string
	// Members are the member ids of the group's members.
	Members []string
}

// Active reports whether the group has members in Kafka.
func (s KafkaGroupState) Active() bool {
	return len(s.Members) > 0 || (s.State != "Empty" && s.State != "Dead")
}

// State describes the group (DescribeGroups).
func (k *KafkaGroup) State(ctx context.Context) (KafkaGroupState, error) {
	var st KafkaGroupState
	err := k.withCoordinator(ctx, func(b *sarama.Broker) error {
		resp, err := b.DescribeGroups(&sarama.DescribeGroupsRequest{Groups: []string{k.group}})
		if err != nil {
			return err
		}
		if len(resp.Groups) != 1 {
			return fmt.Errorf("groups: DescribeGroups answered %d groups for one", len(resp.Groups))
		}
		g := resp.Groups[0]
		if g.Err != sarama.ErrNoError {
			return g.Err
		}
		st = KafkaGroupState{State: g.State}
		for id := range g.Members {
			st.Members = append(st.Members, id)
		}
		sort.Strings(st.Members)
		return nil
	})
	if err != nil {
		return KafkaGroupState{}, fmt.Errorf("groups: describe group %s in Kafka: %w", k.group, err)
	}
	return st, nil
}

// Offsets reads the group's committed offsets of tps (OffsetFetch). A
// partition without a committed offset is absent from the result.
func (k *KafkaGroup) Offsets(ctx context.Context, tps []TopicPartition) (map[TopicPartition]int64, error) {
	out := make(map[TopicPartition]int64, len(tps))
	if len(tps) == 0 {
		return out, nil
	}
	err := k.withCoordinator(ctx, func(b *sarama.Broker) error {
		clear(out)
		req := &sarama.OffsetFetchRequest{Version: 1, ConsumerGroup: k.group}
		for _, tp := range tps {
			req.AddPartition(tp.Topic, tp.Partition)
		}
		resp, err := b.FetchOffset(req)
		if err != nil {
			return err
		}
		if resp.Err != sarama.ErrNoError {
			return resp.Err
		}
		for _, tp := range tps {
			blk := resp.GetBlock(tp.Topic, tp.Partition)
			switch {
			case blk == nil:
			case blk.Err != sarama.ErrNoError:
				return fmt.Errorf("%s-%d: %w", tp.Topic, tp.Partition, blk.Err)
			case blk.Offset >= 0:
				out[tp] = blk.Offset
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("groups: read offsets of %s from Kafka: %w", k.group, err)
	}
	return out, nil
}

// Commit writes offsets for the group from outside it (OffsetCommit with
// generation -1 and no member id), keeping them for the broker's default
// retention. The coordinator refuses it while the group has members.
func (k *KafkaGroup) Commit(ctx context.Context, offsets map[TopicPartition]int64) error {
	if len(offsets) == 0 {
		return nil
	}
	err := k.withCoordinator(ctx, func(b *sarama.Broker) error {
		req := &sarama.OffsetCommitRequest{
			Version:                 2,
			ConsumerGroup:           k.group,
			ConsumerGroupGeneration: sarama.GroupGenerationUndefined,
			RetentionTime:           -1,
		}
		for tp, off := range offsets {
			req.AddBlock(tp.Topic, tp.Partition, off, 0, "")
		}
		resp, err := b.CommitOffset(req)
		if err != nil {
			return err
		}
		for topic, parts := range resp.Errors {
			for p, kerr := range parts {
				switch kerr {
				case sarama.ErrNoError:
				case sarama.ErrIllegalGeneration, sarama.ErrUnknownMemberId, sarama.ErrRebalanceInProgress:
					return fmt.Errorf("%s-%d: %w (%w)", topic, p, ErrKafkaGroupActive, kerr)
				default:
					return fmt.Errorf("%s-%d: %w", topic, p, kerr)
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("groups: commit offsets of %s to Kafka: %w", k.group, err)
	}
	return nil
}

// withCoordinator runs op against the group's coordinator, finding it
// again and retrying after the errors of a coordinator that moves or is
// still loading the group.
func (k *KafkaGroup) withCoordinator(ctx context.Context, op func(*sarama.Broker) error) error {
	var err error
	for attempt := 0; attempt <= k.retries; attempt++ {
		if attempt > 0 {
			_ = k.client.RefreshCoordinator(k.group)
			select {
			case <-ctx.Done():
				return errors.Join(err, context.Cause(ctx))
			case <-time.After(k.backoff):
			}
		}
		var b *sarama.Broker
		if b, err = k.client.Coordinator(k.group); err != nil {
			continue
		}
		if err = op(b); err == nil || !retriable(err) {
			return err
		}
	}
	return err
}

// retriable reports the errors after which a coordinator request is
// repeated: coordinator moves, loading, and lost connections.
func retriable(err error) bool {
	var kerr sarama.KError
	if errors.As(err, &kerr) {
		switch kerr {
		case sarama.ErrNotCoordinatorForConsumer, sarama.ErrConsumerCoordinatorNotAvailable,
			sarama.ErrOffsetsLoadInProgress, sarama.ErrRequestTimedOut:
			return true
		}
		return false
	}
	return !errors.Is(err, ErrKafkaGroupActive)
}
