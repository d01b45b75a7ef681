package connector

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/zkconsumer/zkconsumer/internal/coordinator"
	"github.com/zkconsumer/zkconsumer/internal/fanout"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// offsetStore reads and writes committed offsets (the next offset to
// consume) of one group.
type offsetStore interface {
	// Fetch returns the committed offset of each partition, zkutil.NoOffset
	// where there is none. Partitions whose committed offset cannot be
	// read (garbage in their ZooKeeper node, an error Kafka reports for
	// them alone) are left out of offsets and returned in unreadable with
	// the reason, so that the others can start; err fails the whole fetch.
	Fetch(ctx context.Context, tps []zkutil.TopicPartition) (offsets map[zkutil.TopicPartition]int64, unreadable map[zkutil.TopicPartition]error, err error)
	// Commit writes offsets as in, the ZooKeeper session that owns their
	// partitions; with an error, some may have been written.
	Commit(ctx context.Context, in owner, offsets map[zkutil.TopicPartition]int64) error
	Close() error
}

// owner is the ZooKeeper session that owns the partitions whose offsets a
// commit writes (a zksession.Bound): offsets go to ZooKeeper only in that
// session, and to Kafka only while its lease holds (the fence Kafka does
// not offer for commits from outside a group).
type owner interface {
	SetOrCreate(ctx context.Context, path string, data []byte) error
	coordinator.Fence
}

var _ owner = zksession.Bound{}

// zkSession is the part of *zksession.Session the connector's offset store
// reads with.
type zkSession interface {
	Get(ctx context.Context, path string) ([]byte, zksession.Stat, error)
}

// zkOffsetStore keeps offsets under /consumers/<group>/offsets/<t>/<p>,
// Kafka's offsets.storage=zookeeper.
type zkOffsetStore struct {
	zk    zkSession
	group string
}

func (s *zkOffsetStore) Fetch(ctx context.Context, tps []zkutil.TopicPartition) (map[zkutil.TopicPartition]int64, map[zkutil.TopicPartition]error, error) {
	type read struct {
		data []byte
		err  error
	}
	reads := make([]read, len(tps))
	fanout.Each(len(tps), zkInFlight, nil, func(i int) {
		tp := tps[i]
		reads[i].data, _, reads[i].err = s.zk.Get(ctx, zkutil.OffsetPath(s.group, tp.Topic, tp.Partition))
	})
	out := make(map[zkutil.TopicPartition]int64, len(tps))
	var unreadable map[zkutil.TopicPartition]error
	for i, tp := range tps {
		path := zkutil.OffsetPath(s.group, tp.Topic, tp.Partition)
		data, err := reads[i].data, reads[i].err
		switch {
		case errors.Is(err, zksession.ErrNoNode):
			out[tp] = zkutil.NoOffset
		case err != nil:
			return nil, nil, fmt.Errorf("connector: read offset %s: %w", path, err)
		default:
			off, err := zkutil.DecodeOffset(path, data)
			if err != nil {
				unreadable = addUnreadable(unreadable, tp, err)
				continue
			}
			out[tp] = off
		}
	}
	return out, unreadable, nil
}

// zkInFlight bounds the ZooKeeper requests one offset fetch or commit has
// in flight at once. The session pipelines them over its connection, so
// the partitions of a rebalance cost a few round trips instead of one
// each (one after another, 400 partitions at 10 ms round trips took 4 s).
const zkInFlight = 256

// addUnreadable records err for tp, allocating the map on first use.
func addUnreadable(m map[zkutil.TopicPartition]error, tp zkutil.TopicPartition, err error) map[zkutil.TopicPartition]error {
	if m == nil {
		m = map[zkutil.TopicPartition]error{}
	}
	m[tp] = err
	return m
}

func (s *zkOffsetStore) Commit(ctx context.Context, in owner, offsets map[zkutil.TopicPartition]int64) error {
	tps := make([]zkutil.TopicPartition, 0, len(offsets))
	for tp := range offsets {
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, compareTP) // errors in a stable order
	errs := make([]error, len(tps))
	fanout.Each(len(tps), zkInFlight, nil, func(i int) {
		tp, off := tps[i], offsets[tps[i]]
		path := zkutil.OffsetPath(s.group, tp.Topic, tp.Partition)
		if err := in.SetOrCreate(ctx, path, zkutil.EncodeOffset(off)); err != nil {
			errs[i] = fmt.Errorf("%s=%s: %w", path, strconv.FormatInt(off, 10), err)
		}
	})
	return errors.Join(errs...)
}

func (s *zkOffsetStore) Close() error { return nil }

// dualOffsetStore is dual.commit.enabled: commits go to Kafka, then to
// ZooKeeper; a fetch returns the larger of the two, which is how a group
// moves off ZooKeeper offsets without rewinding. A partition unreadable in
// either store is unreadable: the larger of the two is unknown.
type dualOffsetStore struct {
	kafka, zk offsetStore
}

func (s *dualOffsetStore) Fetch(ctx context.Context, tps []zkutil.TopicPartition) (map[zkutil.TopicPartition]int64, map[zkutil.TopicPartition]error, error) {
	k, kBad, err := s.kafka.Fetch(ctx, tps)
	if err != nil {
		return nil, nil, err
	}
	z, zBad, err := s.zk.Fetch(ctx, tps)
	if err != nil {
		return nil, nil, err
	}
	for tp, off := range z {
		if kOff, ok := k[tp]; ok && off > kOff {
			k[tp] = off
		}
	}
	unreadable := kBad
	for tp, err := range zBad {
		if prev, ok := unreadable[tp]; ok {
			err = errors.Join(prev, err)
		}
		unreadable = addUnreadable(unreadable, tp, err)
	}
	for tp := range unreadable {
		delete(k, tp)
	}
	return k, unreadable, nil
}

func (s *dualOffsetStore) Commit(ctx context.Context, in owner, offsets map[zkutil.TopicPartition]int64) error {
	if err := s.kafka.Commit(ctx, in, offsets); err != nil {
		return err
	}
	return s.zk.Commit(ctx, in, offsets)
}

func (s *dualOffsetStore) Close() error { return errors.Join(s.kafka.Close(), s.zk.Close()) }

// kafkaCommitStore is offsets.storage=kafka in ZooKeeper mode: commits from
// outside the group, each made only while the lease of the session that
// owns the partitions holds.
type kafkaCommitStore struct{ *coordinator.Client }

func (s kafkaCommitStore) Commit(ctx context.Context, in owner, offsets map[zkutil.TopicPartition]int64) error {
	return s.CommitFenced(ctx, in, offsets)
}
