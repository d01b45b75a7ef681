package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/zkconsumer/zkconsumer/internal/groups"
)

// errOffsetsKept is returned when some of the offsets asked for were not
// deleted; the table says which and why.
var errOffsetsKept = errors.New("some offsets were not deleted, see STATUS above")

// deleteOffsets is --delete-offsets: it deletes one group's committed
// offsets of the topics --topic names, in ZooKeeper, or with
// --bootstrap-server through Kafka's group coordinator, and prints the
// outcome of each partition.
func (c *command) deleteOffsets(ctx context.Context) error {
	scope, err := parseResetScope(false, c.o.Topics)
	if err != nil {
		return err
	}
	ctx, cancel := c.step(ctx)
	defer cancel()
	var rows []groups.OffsetDeletion
	if c.o.BootstrapServer != "" {
		rows, err = groups.DeleteKafkaOffsets(ctx, splitServers(c.o.BootstrapServer), c.o.Group, scope.Topics, c.o.Timeout, c.sec)
	} else {
		rows, err = groups.DeleteOffsets(ctx, c.zk, c.o.Group, scope.Topics)
	}
	if errors.Is(err, groups.ErrUnknownGroup) {
		return fmt.Errorf("The consumer group '%s' does not exist.", c.o.Group)
	}
	if rows == nil {
		return err
	}
	kept := slices.ContainsFunc(rows, func(r groups.OffsetDeletion) bool { return r.Err != nil })
	if !kept {
		fmt.Fprintf(c.stdout, "Deleted the committed offsets of group '%s' for topic(s) %s.\n",
			c.o.Group, strings.Join(slices.Sorted(maps.Keys(scope.Topics)), ", "))
	}
	if perr := groups.PrintOffsetDeletions(c.stdout, rows); perr != nil {
		return errors.Join(err, perr)
	}
	if kept {
		err = errors.Join(err, errOffsetsKept)
	}
	return err
}
