package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/zkconsumer/zkconsumer/connector"
	"github.com/zkconsumer/zkconsumer/internal/zkbrokers"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// The console consumer's own ZooKeeper work, around the connector's: the
// checks Kafka's ConsoleConsumer makes before it starts (checkZk,
// checkAndMaybeDeleteOldPath) and the removal of a generated group's
// znodes when it exits.

// dialZK opens a short-lived session with the consumer's ZooKeeper
// settings.
func dialZK(ctx context.Context, cfg connector.Config) (*zksession.Session, error) {
	return zksession.Dial(ctx, zksession.SessionConfig{
		Connect:           cfg.ZooKeeperConnect,
		SessionTimeout:    cfg.ZooKeeperSessionTimeout,
		ConnectionTimeout: cfg.ZooKeeperConnectionTimeout,
	})
}

// checkZK refuses to start, as Kafka does, when no broker is registered or
// when the group already has offsets and would be told to start from the
// beginning (a group continues from its offsets, so --from-beginning would
// silently mean nothing); --delete-consumer-offsets deletes the group
// instead. When no topic matches the filter yet it says so on stderr: the
// consumer then waits, as Kafka's does, for a matching topic to be
// created, and without the note a misspelt --topic looked like a hang.
func checkZK(ctx context.Context, cfg connector.Config, o *options, stderr io.Writer) error {
	s, err := dialZK(ctx, cfg)
	if err != nil {
		return err
	}
	defer s.Close()
	ok, _, err := s.Exists(ctx, zkbrokers.BrokerIDsPath)
	if err != nil {
		return err
	}
	if !ok {
		return &usageError{msg: "No brokers found in ZK."}
	}
	if err := noteNoTopic(ctx, s, cfg, o, stderr); err != nil {
		return err
	}
	if o.deleteOffsets {
		return deleteRecursive(ctx, s, zkutil.GroupPath(cfg.GroupID))
	}
	if cfg.AutoOffsetReset != connector.AutoOffsetResetSmallest {
		return nil
	}
	ok, _, err = s.Exists(ctx, zkutil.OffsetsPath(cfg.GroupID))
	if err != nil {
		return err
	}
	if ok {
		return &usageError{msg: "Found previous offset information for this group " + cfg.GroupID +
			". Please use --delete-consumer-offsets to delete previous offsets metadata"}
	}
	return nil
}

// noteNoTopic prints a note on stderr when no topic in ZooKeeper matches
// the filter.
func noteNoTopic(ctx context.Context, s *zksession.Session, cfg connector.Config, o *options, stderr io.Writer) error {
	if o.matcher == nil {
		return nil
	}
	topics, err := s.Children(ctx, zkbrokers.BrokerTopicsPath)
	if err != nil && !errors.Is(err, zksession.ErrNoNode) {
		return err
	}
	for _, t := range topics {
		if o.matcher.Allows(t, cfg.ExcludeInternalTopics) {
			return nil
		}
	}
	fmt.Fprintf(stderr, "console-consumer: no topic matches %s yet; waiting for one to be created (Ctrl-C to stop)\n", o.filterFlag)
	return nil
}

// deleteGroup removes /consumers/<group> and everything below it, as
// Kafka does on exit for a group it generated, so that random groups do
// not pile up in ZooKeeper.
func deleteGroup(ctx context.Context, cfg connector.Config) error {
	s, err := dialZK(ctx, cfg)
	if err != nil {
		return err
	}
	defer s.Close()
	return deleteRecursive(ctx, s, zkutil.GroupPath(cfg.GroupID))
}

// deleteRecursive deletes path and its descendants; a missing node is not
// an error (ZkUtils.maybeDeletePath).
func deleteRecursive(ctx context.Context, s *zksession.Session, path string) error {
	children, err := s.Children(ctx, path)
	if errors.Is(err, zksession.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, c := range children {
		if err := deleteRecursive(ctx, s, path+"/"+c); err != nil {
			return err
		}
	}
	err = s.Delete(ctx, path, -1)
	if err != nil && !errors.Is(err, zksession.ErrNoNode) {
		return fmt.Errorf("delete %s: %w", path, err)
	}
	return nil
}
