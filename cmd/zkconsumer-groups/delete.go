package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkconsumer/zkconsumer/internal/groups"
)

// delete removes whole groups, one topic of groups, or one topic of every
// inactive group, as Kafka 1.1.1's --delete did. With groups named, it
// checks every one first and deletes nothing when one of them is unknown or
// has members.
func (c *command) delete(ctx context.Context) error {
	ctx, cancel := c.step(ctx)
	defer cancel()
	topic := ""
	if len(c.o.Topics) == 1 {
		topic = c.o.Topics[0]
	}
	if len(c.o.Groups) == 0 {
		deleted, active, err := groups.DeleteTopicFromGroups(ctx, c.zk, topic)
		for _, g := range deleted {
			fmt.Fprintf(c.stdout, "Deleted consumer group information for group '%s' topic '%s' in zookeeper.\n", g, topic)
		}
		for _, g := range active {
			c.warnf("group '%s' still has registered members; its information for topic '%s' was kept.", g, topic)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "Deleted consumer group information for all inactive consumer groups for topic '%s' in zookeeper.\n", topic)
		return nil
	}

	var refused []error
	for _, g := range c.o.Groups {
		if err := groups.CheckInactive(ctx, c.zk, g); err != nil {
			refused = append(refused, deleteRefusal(g, topic, err))
		}
	}
	if len(refused) > 0 {
		if len(c.o.Groups) > 1 {
			refused = append(refused, errors.New("nothing was deleted"))
		}
		return errors.Join(refused...)
	}
	for _, g := range c.o.Groups {
		if topic == "" {
			if err := groups.DeleteGroup(ctx, c.zk, g); err != nil {
				return deleteRefusal(g, topic, err)
			}
			fmt.Fprintf(c.stdout, "Deleted all consumer group information for group '%s' in zookeeper.\n", g)
			continue
		}
		whole, err := groups.DeleteGroupTopic(ctx, c.zk, g, topic)
		if err != nil {
			return deleteRefusal(g, topic, err)
		}
		if whole {
			fmt.Fprintf(c.stdout, "Deleted all consumer group information for group '%s' in zookeeper (topic '%s' was its only topic).\n", g, topic)
		} else {
			fmt.Fprintf(c.stdout, "Deleted consumer group information for group '%s' topic '%s' in zookeeper.\n", g, topic)
		}
	}
	return nil
}

// deleteRefusal words a refused delete as Kafka 1.1.1 did, with the detail.
func deleteRefusal(group, topic string, err error) error {
	what := fmt.Sprintf("group '%s'", group)
	if topic != "" {
		what += fmt.Sprintf(" topic '%s'", topic)
	}
	switch {
	case errors.Is(err, groups.ErrGroupActive):
		return fmt.Errorf("Delete for %s failed because its consumers are still active: %w", what, err)
	case errors.Is(err, groups.ErrUnknownGroup):
		return fmt.Errorf("Delete for %s failed because group does not exist.", what)
	}
	return fmt.Errorf("Delete for %s failed: %w", what, err)
}
