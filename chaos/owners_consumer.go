package chaos

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/IBM/sarama"
)

// With the consumer group protocol (KIP-848) the broker assigns, so the
// final owners are checked against the broker's own view of the group
// (ConsumerGroupDescribe) besides kafkaOwners: a classic group, or one the
// broker has not finished reconciling, does not pass.

// brokerGroup is a consumer-protocol group as its coordinator describes
// it; Err is set when the coordinator answered with an error (a group that
// is no consumer-protocol group is described as GROUP_ID_NOT_FOUND).
type brokerGroup struct {
	State   string
	Err     string
	Members []brokerMember
}

// brokerMember is one member of a brokerGroup: its client id (the slot's,
// see memberClientID), its assigned and its target partitions.
type brokerMember struct {
	ID, ClientID     string
	Epoch            int32
	Assigned, Target map[topicPartition]bool
}

// slotAssignment is what a running incarnation reported as its partitions
// (its rebalance listener); ok is false before its first report.
type slotAssignment struct {
	Slot  int
	Key   string
	Parts map[topicPartition]bool
	OK    bool
}

// memberClientID is the client.id of slot's members.
func memberClientID(slot int) string { return fmt.Sprintf("chaos-member-%d", slot) }

// slotOfClientID is the slot whose member uses client.id id; ok is false
// for any other id.
func slotOfClientID(id string) (int, bool) {
	s, found := strings.CutPrefix(id, "chaos-member-")
	if !found {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 0
}

// brokerOwnerMismatches compares the broker's description of the group
// with the running incarnations: the group is Stable, every member owns
// its target, the broker's members are exactly the running incarnations
// (one per slot, by client id), and each owns what it reported.
func brokerOwnerMismatches(g brokerGroup, running []slotAssignment) []string {
	if g.Err != "" {
		return []string{"the coordinator does not describe a consumer-protocol group: " + g.Err}
	}
	var out []string
	if g.State != "Stable" {
		out = append(out, fmt.Sprintf("the coordinator says the group is %s, not Stable", g.State))
	}
	bySlot := map[int]brokerMember{}
	for _, m := range g.Members {
		slot, ok := slotOfClientID(m.ClientID)
		if !ok {
			out = append(out, fmt.Sprintf("the coordinator lists member %s with client id %q, no slot's", m.ID, m.ClientID))
			continue
		}
		if prev, dup := bySlot[slot]; dup {
			out = append(out, fmt.Sprintf("the coordinator lists two members of slot %d: %s and %s", slot, prev.ID, m.ID))
		}
		bySlot[slot] = m
		if !maps.Equal(m.Assigned, m.Target) {
			out = append(out, fmt.Sprintf("member %s (slot %d) owns %s, its target is %s", m.ID, slot, tpList(m.Assigned), tpList(m.Target)))
		}
	}
	runningSlots := map[int]bool{}
	for _, r := range running {
		runningSlots[r.Slot] = true
		m, ok := bySlot[r.Slot]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("running member %s is not in the coordinator's group", r.Key))
		case !r.OK:
			out = append(out, fmt.Sprintf("running member %s reported no assignment; the coordinator gives it %s", r.Key, tpList(m.Assigned)))
		case !maps.Equal(r.Parts, m.Assigned):
			out = append(out, fmt.Sprintf("running member %s reports %s; the coordinator gives it %s", r.Key, tpList(r.Parts), tpList(m.Assigned)))
		}
	}
	for _, slot := range slices.Sorted(maps.Keys(bySlot)) {
		if !runningSlots[slot] {
			out = append(out, fmt.Sprintf("the coordinator lists member %s of slot %d, which runs no member", bySlot[slot].ID, slot))
		}
	}
	slices.Sort(out)
	return out
}

// tpList prints a set of partitions sorted, as [t-0 t-3].
func tpList(s map[topicPartition]bool) string {
	tps := slices.SortedFunc(maps.Keys(s), compareTP)
	names := make([]string, len(tps))
	for i, tp := range tps {
		names[i] = tp.String()
	}
	return "[" + strings.Join(names, " ") + "]"
}

// describeConsumerGroup asks the group's coordinator to describe it
// (ConsumerGroupDescribe), through a client of its own, within a minute.
func describeConsumerGroup(ctx context.Context, addrs []string, conf *sarama.Config, group string) (brokerGroup, error) {
	type answer struct {
		g   brokerGroup
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		g, err := describeConsumerGroupOnce(addrs, conf, group)
		ch <- answer{g, err}
	}()
	select {
	case a := <-ch:
		return a.g, a.err
	case <-time.After(time.Minute):
		return brokerGroup{}, errors.New("ConsumerGroupDescribe did not answer within a minute")
	case <-ctx.Done():
		return brokerGroup{}, ctx.Err()
	}
}

func describeConsumerGroupOnce(addrs []string, conf *sarama.Config, group string) (brokerGroup, error) {
	client, err := sarama.NewClient(addrs, conf)
	if err != nil {
		return brokerGroup{}, err
	}
	defer client.Close()
	b, err := client.Coordinator(group)
	if err != nil {
		return brokerGroup{}, err
	}
	req := sarama.NewConsumerGroupDescribeRequest(conf.Version)
	req.GroupIDs = []string{group}
	resp, err := b.ConsumerGroupDescribe(req)
	if err != nil {
		return brokerGroup{}, err
	}
	if len(resp.Groups) != 1 || resp.Groups[0].GroupID != group {
		return brokerGroup{}, fmt.Errorf("ConsumerGroupDescribe of %s answered %d groups", group, len(resp.Groups))
	}
	d := resp.Groups[0]
	if !errors.Is(d.ErrorCode, sarama.ErrNoError) {
		msg := d.ErrorCode.Error()
		if d.ErrorMessage != nil && *d.ErrorMessage != "" {
			msg += ": " + *d.ErrorMessage
		}
		return brokerGroup{Err: msg}, nil
	}
	g := brokerGroup{State: d.GroupState}
	for _, m := range d.Members {
		g.Members = append(g.Members, brokerMember{ID: m.MemberID, ClientID: m.ClientID, Epoch: m.MemberEpoch,
			Assigned: assignmentSet(m.Assignment), Target: assignmentSet(m.TargetAssignment)})
	}
	return g, nil
}

func assignmentSet(a sarama.ConsumerGroupAssignment) map[topicPartition]bool {
	out := map[topicPartition]bool{}
	for _, t := range a.TopicPartitions {
		for _, p := range t.Partitions {
			out[topicPartition{t.TopicName, p}] = true
		}
	}
	return out
}
