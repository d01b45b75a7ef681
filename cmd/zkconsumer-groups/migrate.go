package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/zkconsumer/zkconsumer/internal/groups"
)

// migrateToKafka is --migrate-to-kafka: it copies the group's ZooKeeper
// offsets into Kafka's __consumer_offsets through the group coordinator,
// reads them back and prints, per partition, the ZooKeeper offset, the
// Kafka offset and the log-end offset. Without --execute it only prints the
// plan.
//
// It refuses while members are registered in ZooKeeper (they would go on
// committing there), unless --force: with dual.commit.enabled the members
// commit to Kafka first, and a Kafka offset ahead of ZooKeeper's is never
// moved back. It always refuses while the group has members in Kafka.
func (c *command) migrateToKafka(ctx context.Context) error {
	o := c.o
	bootstrap := splitServers(o.BootstrapServer)
	if len(bootstrap) == 0 {
		return errors.New("--migrate-to-kafka needs --bootstrap-server host:port[,host:port...]")
	}
	sctx, cancel := c.step(ctx)
	defer cancel()
	if err := groups.CheckGroup(sctx, c.zk, o.Group); err != nil {
		return err
	}
	members, err := groups.ListMembers(sctx, c.zk, o.Group)
	if err != nil {
		return err
	}
	if len(members) > 0 {
		ids := make([]string, len(members))
		for i, m := range members {
			ids[i] = m.ID
		}
		if !o.Force {
			return fmt.Errorf("%w: %s; stop them first (or, if they commit to Kafka too with dual.commit.enabled=true, pass --force)",
				groups.ErrGroupActive, strings.Join(ids, ", "))
		}
		fmt.Fprintf(c.stderr, "Warning: group %s has %d member(s) registered in ZooKeeper (%s); migrating anyway (--force).\n",
			o.Group, len(members), strings.Join(ids, ", "))
	}
	zkOffsets, err := groups.ReadCommittedOffsets(sctx, c.zk, o.Group)
	if err != nil {
		return err
	}
	if len(zkOffsets) == 0 {
		return fmt.Errorf("group %s has no offsets in ZooKeeper: nothing to migrate", o.Group)
	}
	tps := make([]groups.TopicPartition, 0, len(zkOffsets))
	for tp := range zkOffsets {
		tps = append(tps, tp)
	}
	lo := groups.NewLogOffsets(c.zk, o.Timeout, c.sec)
	defer lo.Close()
	lctx, lcancel := c.step(ctx)
	defer lcancel()
	logEnd, err := lo.Latest(lctx, tps)
	if err != nil {
		return err
	}
	kafka, err := groups.KafkaCoordinator(bootstrap, o.Group, o.Timeout, c.sec)
	if err != nil {
		return err
	}
	defer kafka.Close()
	kctx, kcancel := c.step(ctx)
	defer kcancel()
	rows, err := groups.Migrate(kctx, kafka, zkOffsets, logEnd, o.Execute)
	if rows == nil {
		return err
	}
	switch {
	case !o.Execute:
		fmt.Fprintf(c.stdout, "Dry run: the offsets of group %s that --execute would copy from ZooKeeper to Kafka:\n\n", o.Group)
	case err == nil:
		fmt.Fprintf(c.stdout, "Copied the offsets of group %s from ZooKeeper to Kafka; read back from Kafka:\n\n", o.Group)
	}
	if perr := groups.PrintMigration(c.stdout, o.Group, rows, o.Execute); perr != nil {
		return errors.Join(err, perr)
	}
	return err
}

// splitServers splits a comma-separated server list, dropping blanks.
func splitServers(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
