package testcluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/IBM/sarama"
	"github.com/go-zookeeper/zk"
)

// DeleteTopic deletes a topic and waits until the controller has finished:
// neither <chroot>/brokers/topics/<topic> nor the pending deletion
// <chroot>/admin/delete_topics/<topic> is left in ZooKeeper. In KRaft mode
// it waits until no broker's metadata lists the topic any more.
func (c *Cluster) DeleteTopic(ctx context.Context, topic string) error {
	admin, err := sarama.NewClusterAdmin(c.brokerAddrs, c.ClientConfig())
	if err != nil {
		return fmt.Errorf("testcluster: admin client: %w", err)
	}
	err = admin.DeleteTopic(topic)
	_ = admin.Close()
	if err != nil {
		return fmt.Errorf("testcluster: delete topic %s: %w", topic, err)
	}
	if c.kraft {
		return c.waitTopicGone(ctx, topic)
	}
	conn, err := c.dialZK(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	for _, path := range []string{c.chroot + "/brokers/topics/" + topic, c.chroot + "/admin/delete_topics/" + topic} {
		for {
			ok, _, err := conn.Exists(path)
			if err != nil && !errors.Is(err, zk.ErrNoNode) {
				return fmt.Errorf("testcluster: read %s: %w", path, err)
			}
			if !ok {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("testcluster: topic %s not deleted: %s remains: %w", topic, path, ctx.Err())
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil
}
