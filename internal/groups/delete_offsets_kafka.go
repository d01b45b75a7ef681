package groups

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkconsumer/zkconsumer/internal/secure"
)

// deleteOffsetsAttempts bounds the OffsetDelete requests of
// DeleteKafkaOffsets when the coordinator moves or is loading the group.
const deleteOffsetsAttempts = 5

// DeleteKafkaOffsets deletes the committed offsets of group, coordinated
// by Kafka, for the partitions of topics (all of a topic's partitions when
// its list is empty), with one OffsetDelete request (Kafka 2.4 or later)
// to the group's coordinator, reached through the bootstrap servers;
// timeout bounds each network step and sec, if not nil, secures the
// connections. The coordinator decides, and each partition's outcome is
// returned: nil, or an error wrapping ErrSubscribed for a topic the
// group's members subscribe to, ErrUnknownTopic for a topic that does not
// exist (with AllPartitions when none were listed). It fails as a whole
// with an error wrapping ErrUnknownGroup when the coordinator does not
// know the group, ErrGroupActive when it refuses a non-empty group, or
// the error of the cluster.
func DeleteKafkaOffsets(ctx context.Context, bootstrap []string, group string, topics map[string][]int32, timeout time.Duration, sec *secure.Client) ([]OffsetDeletion, error) {
	if len(bootstrap) == 0 {
		return nil, errors.New("no bootstrap server")
	}
	cfg := sarama.NewConfig()
	cfg.ClientID = "zkconsumer-groups"
	cfg.Version = sarama.V2_4_0_0 // OffsetDelete's first version
	cfg.Net.DialTimeout = timeout
	cfg.Net.ReadTimeout = timeout
	cfg.Net.WriteTimeout = timeout
	cfg.Metadata.Retry.Max = 1
	cfg.Metadata.Retry.Backoff = 250 * time.Millisecond
	cfg.Metadata.Full = false
	cfg.Metadata.AllowAutoTopicCreation = false // asking for a topic must not create it
	if sec != nil {
		sec.Apply(cfg)
	}
	cl, err := sarama.NewClient(bootstrap, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to %v: %w", bootstrap, sec.Explain(err))
	}
	defer func() { _ = cl.Close() }()

	var out []OffsetDeletion
	req := &sarama.DeleteOffsetsRequest{Group: group}
	var asked []TopicPartition
	for _, topic := range slices.Sorted(maps.Keys(topics)) {
		parts := topics[topic]
		if len(parts) == 0 {
			parts, err = cl.Partitions(topic)
			if errors.Is(err, sarama.ErrUnknownTopicOrPartition) {
				out = append(out, OffsetDeletion{TopicPartition{Topic: topic, Partition: AllPartitions}, fmt.Errorf("%w %q", ErrUnknownTopic, topic)})
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("partitions of topic %q: %w", topic, err)
			}
		}
		for _, p := range slices.Compact(slices.Sorted(slices.Values(parts))) {
			req.AddPartition(topic, p)
			asked = append(asked, TopicPartition{Topic: topic, Partition: p})
		}
	}
	if len(asked) == 0 {
		return out, nil
	}
	resp, err := sendDeleteOffsets(ctx, cl, group, req)
	if err != nil {
		return nil, err
	}
	switch resp.ErrorCode {
	case sarama.ErrNoError:
	case sarama.ErrGroupIDNotFound:
		return nil, fmt.Errorf("%w %q (Kafka's coordinator does not know it)", ErrUnknownGroup, group)
	case sarama.ErrNonEmptyGroup:
		return nil, fmt.Errorf("%w: Kafka's coordinator refuses to delete offsets of group %q while it has members (%w)", ErrGroupActive, group, resp.ErrorCode)
	default:
		return nil, fmt.Errorf("delete offsets of group %q: %w", group, resp.ErrorCode)
	}
	for _, tp := range asked {
		kerr, ok := resp.Errors[tp.Topic][tp.Partition]
		var err error
		switch {
		case !ok:
			err = fmt.Errorf("the coordinator did not answer for %s-%d", tp.Topic, tp.Partition)
		case kerr == sarama.ErrNoError:
		case kerr == sarama.ErrGroupSubscribedToTopic:
			err = fmt.Errorf("%w %q (%w)", ErrSubscribed, tp.Topic, kerr)
		case kerr == sarama.ErrUnknownTopicOrPartition:
			err = fmt.Errorf("%w: %s-%d (%w)", ErrUnknownPartition, tp.Topic, tp.Partition, kerr)
		default:
			err = kerr
		}
		out = append(out, OffsetDeletion{tp, err})
	}
	slices.SortFunc(out, func(a, b OffsetDeletion) int { return compareTP(a.TopicPartition, b.TopicPartition) })
	return out, nil
}

// sendDeleteOffsets sends req to group's coordinator, finding it again
// after an error of a coordinator that moved, is not ready, or cannot be
// reached.
func sendDeleteOffsets(ctx context.Context, cl sarama.Client, group string, req *sarama.DeleteOffsetsRequest) (*sarama.DeleteOffsetsResponse, error) {
	var last error
	for attempt := range deleteOffsetsAttempts {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return nil, fmt.Errorf("delete offsets of group %q: %w (last error: %w)", group, ctx.Err(), last)
			case <-time.After(time.Duration(attempt) * 300 * time.Millisecond):
			}
			_ = cl.RefreshCoordinator(group)
		}
		b, err := cl.Coordinator(group)
		if err != nil {
			last = err
			continue
		}
		resp, err := b.DeleteOffsets(req)
		if err != nil {
			last = err
			continue
		}
		switch resp.ErrorCode {
		case sarama.ErrNotCoordinatorForConsumer, sarama.ErrConsumerCoordinatorNotAvailable, sarama.ErrOffsetsLoadInProgress:
			last = resp.ErrorCode
			continue
		}
		return resp, nil
	}
	return nil, fmt.Errorf("delete offsets of group %q: %w", group, last)
}
