package zkgroup

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/zksession"
	"github.com/zkconsumer/zkconsumer/zkutil"
)

// errNoSession: the previous session expired and no new one is established
// yet; the member tries again when it is.
var errNoSession = errors.New("no ZooKeeper session at the moment")

// register makes sure /consumers/<group>/ids/<consumerId> exists in the
// current session. A node left by an earlier session of the same consumer
// id (a restart with a fixed consumer.id within the session timeout) is
// waited out, up to the session timeout, instead of failing at once.
//
// A registration already made in the current session is checked, not
// trusted: an operator may have deleted the node, and a member missing from
// /ids is left out of every other member's assignment.
func (m *Member) register(ctx context.Context) error {
	session := m.zk.ID()
	if session == 0 {
		return errNoSession
	}
	in := m.zk.Bind(session)
	path := zkutil.ConsumerIDPath(m.cfg.Group, m.cfg.ConsumerID)
	if m.registered == session {
		ok, stat, err := in.Exists(ctx, path)
		if err != nil {
			return fmt.Errorf("check registration %s: %w", path, err)
		}
		if ok && stat.EphemeralOwner == session {
			return nil
		}
		m.log.Warn("our registration node is gone although our session lives; registering again", "path", path)
		m.registered = 0
	}
	data, err := zkutil.EncodeRegistration(m.cfg.Subscription.registration(m.cfg.Now(), m.cfg.Assignor.Name()))
	if err != nil {
		return fmt.Errorf("%w", err)
	}
	// Like Kafka, create only what membership needs: /offsets appears with
	// the first commit, and tools read its presence as "this group has
	// consumed" (ConsoleConsumer refuses --from-beginning then).
	for _, p := range []string{zkutil.ConsumerIDsPath(m.cfg.Group), zkutil.OwnersPath(m.cfg.Group)} {
		if err := in.EnsurePath(ctx, p); err != nil {
			return fmt.Errorf("create %s: %w", p, err)
		}
	}
	wait := m.cfg.SessionTimeout + m.cfg.Backoff
	deadline := time.Now().Add(wait)
	for {
		// The create itself is not abandoned when ctx ends: it could land
		// after Close had looked for the node, and outlive the member.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.handOverTimeout())
		err := in.CreateEphemeral(cctx, path, data)
		cancel()
		if err == nil {
			m.registered = session
			m.log.Info("registered", "path", path, "registration", string(data))
			return nil
		}
		if !errors.Is(err, zksession.ErrNodeExists) {
			return fmt.Errorf("register %s: %w", path, err)
		}
		exists, stat, gone, err := in.ExistsW(ctx, path)
		if err != nil {
			return fmt.Errorf("register %s: %w", path, err)
		}
		if exists && stat.EphemeralOwner == session {
			m.registered = session // our own create, whose reply was lost
			return nil
		}
		if exists {
			if time.Now().After(deadline) {
				return fmt.Errorf("register %s: the node is held by another session (0x%x) for more than %v; is another process using consumer.id %q?",
					path, stat.EphemeralOwner, wait, m.cfg.ConsumerID)
			}
			m.log.Warn("registration node held by another session; waiting for it to expire", "path", path, "owner", fmt.Sprintf("0x%x", stat.EphemeralOwner))
			timer := time.NewTimer(time.Until(deadline))
			select {
			case <-ctx.Done():
				timer.Stop()
				return ctx.Err()
			case <-gone:
			case <-timer.C:
			}
			timer.Stop()
		}
	}
}
