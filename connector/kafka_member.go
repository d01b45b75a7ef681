package connector

import (
	"context"
	"fmt"

	"github.com/zkconsumer/zkconsumer/internal/consumergroup"
	"github.com/zkconsumer/zkconsumer/rebalance/kafkagroup"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// kafkaMember is the group member the Kafka-mode generation loop drives:
// a kafkagroup.Member (group.protocol=classic) or a consumergroup.Member
// (group.protocol=consumer, KIP-848). Both end generations with
// kafkagroup's causes and fail commits with its errors.
type kafkaMember interface {
	Join(ctx context.Context) (*kafkaJoined, error)
	Commit(ctx context.Context, gen kafkaGen, offsets map[zkutil.TopicPartition]int64) error
	CommitFinal(ctx context.Context, gen kafkaGen, offsets map[zkutil.TopicPartition]int64) error
	Fetch(ctx context.Context, tps []zkutil.TopicPartition) (map[zkutil.TopicPartition]int64, error)
	Leave() error
	Close() error
}

// kafkaGen is a generation of either member.
type kafkaGen interface {
	Context() context.Context
	Done() <-chan struct{}
	Err() error
	LeaseHeld() bool
	LeaseChanged() <-chan struct{}
}

var (
	_ kafkaGen = (*kafkagroup.Generation)(nil)
	_ kafkaGen = (*consumergroup.Generation)(nil)
)

// kafkaJoined is what a Join gives the loop.
type kafkaJoined struct {
	kafkaGen
	// ID is the generation id (classic) or the member epoch (consumer).
	ID       int32
	MemberID string
	// Assignment is this member's partitions by topic.
	Assignment map[string][]int32
	// GroupAssignment is every member's share, known to a classic leader
	// only.
	GroupAssignment map[string]map[string][]int32
	// Cooperative and Continues are the classic protocol's (see
	// kafkagroup.Generation): the generation follows KIP-429's
	// cooperative protocol, and continues the member's previous one.
	Cooperative, Continues bool
}

// classicMember drives a kafkagroup.Member.
type classicMember struct{ *kafkagroup.Member }

// Join joins and describes the generation for the loop.
func (m classicMember) Join(ctx context.Context) (*kafkaJoined, error) {
	g, err := m.Member.Join(ctx)
	if err != nil {
		return nil, err
	}
	return &kafkaJoined{kafkaGen: g, ID: g.ID, MemberID: g.MemberID, Assignment: g.Assignment, GroupAssignment: g.GroupAssignment,
		Cooperative: g.Cooperative, Continues: g.Continues}, nil
}

// Commit commits as a member of gen, a generation of this protocol.
func (m classicMember) Commit(ctx context.Context, gen kafkaGen, offsets map[zkutil.TopicPartition]int64) error {
	g, err := classicGen(gen)
	if err != nil {
		return err
	}
	return m.Member.Commit(ctx, g, offsets)
}

// CommitFinal is Commit retried until ctx ends.
func (m classicMember) CommitFinal(ctx context.Context, gen kafkaGen, offsets map[zkutil.TopicPartition]int64) error {
	g, err := classicGen(gen)
	if err != nil {
		return err
	}
	return m.Member.CommitFinal(ctx, g, offsets)
}

func classicGen(gen kafkaGen) (*kafkagroup.Generation, error) {
	g, ok := gen.(*kafkagroup.Generation)
	if !ok {
		return nil, fmt.Errorf("connector: a %T is not a generation of the classic group protocol", gen)
	}
	return g, nil
}

// consumerMember drives a consumergroup.Member.
type consumerMember struct{ *consumergroup.Member }

// Join joins and describes the generation for the loop.
func (m consumerMember) Join(ctx context.Context) (*kafkaJoined, error) {
	g, err := m.Member.Join(ctx)
	if err != nil {
		return nil, err
	}
	return &kafkaJoined{kafkaGen: g, ID: g.ID, MemberID: g.MemberID, Assignment: g.Assignment}, nil
}

// Commit commits as a member of gen, a generation of this protocol.
func (m consumerMember) Commit(ctx context.Context, gen kafkaGen, offsets map[zkutil.TopicPartition]int64) error {
	g, err := consumerGen(gen)
	if err != nil {
		return err
	}
	return m.Member.Commit(ctx, g, offsets)
}

// CommitFinal is Commit retried until ctx ends.
func (m consumerMember) CommitFinal(ctx context.Context, gen kafkaGen, offsets map[zkutil.TopicPartition]int64) error {
	g, err := consumerGen(gen)
	if err != nil {
		return err
	}
	return m.Member.CommitFinal(ctx, g, offsets)
}

func consumerGen(gen kafkaGen) (*consumergroup.Generation, error) {
	g, ok := gen.(*consumergroup.Generation)
	if !ok {
		return nil, fmt.Errorf("connector: a %T is not a generation of the consumer group protocol", gen)
	}
	return g, nil
}
