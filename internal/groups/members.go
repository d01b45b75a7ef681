package groups

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// Member is one registered member of a group, read from its ephemeral
// /consumers/<group>/ids/<consumerId> node.
type Member struct {
	// ID is the consumer id, the node's name.
	ID string
	// Host is the host name embedded in a generated consumer id
	// ("<group>_<host>-<millis>-<hex>"), or "" when the id was configured
	// (consumer.id) and names no host.
	Host string
	// Registration is what the member subscribes to; zero when Err is set.
	Registration zkutil.Registration
	// Registered is when the node was created (by the member's current
	// ZooKeeper session).
	Registered time.Time
	// Err is set when the registration cannot be decoded; such a member
	// still blocks deletes and resets.
	Err error
}

// generatedID matches the part of a generated consumer id after "<group>_".
var generatedID = regexp.MustCompile(`^(.+)-([0-9]{10,})-([0-9a-f]{1,8})$`)

// hostOf returns the host of a generated consumer id, or "".
func hostOf(group, id string) string {
	rest, ok := strings.CutPrefix(id, group+"_")
	if !ok {
		return ""
	}
	m := generatedID.FindStringSubmatch(rest)
	if m == nil {
		return ""
	}
	return m[1]
}

// ListMembers returns the members registered in group, sorted by consumer
// id; none when /consumers/<group>/ids does not exist. A member whose
// registration cannot be decoded is returned with Err set; a member that
// left while being read is left out.
func ListMembers(ctx context.Context, zk *zksession.Session, group string) ([]Member, error) {
	ids, err := childrenMaybe(ctx, zk, zkutil.ConsumerIDsPath(group))
	if err != nil {
		return nil, fmt.Errorf("list members of group %q: %w", group, err)
	}
	slices.Sort(ids)
	members := make([]Member, 0, len(ids))
	for _, id := range ids {
		path := zkutil.ConsumerIDPath(group, id)
		data, st, err := zk.Get(ctx, path)
		if errors.Is(err, zksession.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list members of group %q: %w", group, err)
		}
		m := Member{ID: id, Host: hostOf(group, id), Registered: st.Ctime}
		m.Registration, m.Err = zkutil.DecodeRegistration(path, data)
		members = append(members, m)
	}
	return members, nil
}

// StreamsString formats the member's subscription as "topic:streams"
// pairs in topic order, "topic1:2,topic2:1", or for a wildcard
// "regex:streams"; "-" when the registration is unreadable.
func (m Member) StreamsString() string {
	if m.Err != nil || len(m.Registration.Subscription) == 0 {
		return "-"
	}
	keys := make([]string, 0, len(m.Registration.Subscription))
	for k := range m.Registration.Subscription {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s:%d", k, m.Registration.Subscription[k])
	}
	return strings.Join(parts, ",")
}
