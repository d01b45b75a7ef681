// Package lease is the core of the module's two leases: the lease of a
// ZooKeeper session (zkutil) and the lease of a member of a group that
// Kafka's coordinator manages (internal/grouplease). A Lease says until
// when its holder is known to own what it was given; the connector hands
// out messages only while it holds.
//
// What the two have in common lives here. A lease is renewed from send
// times: a request sent at t and answered in the right way proves that its
// holder was alive at the other end no earlier than t, whenever the answer
// is read, so a process frozen past its lease (SIGSTOP, a long GC pause)
// finds it lapsed when it wakes, whatever is buffered in its sockets. Its
// end is kept on two clocks: the monotonic one, immune to clock steps,
// and the wall clock, which counts a suspend of the machine that stops the
// monotonic one. A revoked lease is gone for good. Every change (a grant,
// a renewal, a revocation, a late start, and a lapse by the clock) closes
// the channel of the lease's Signal.
//
// What differs stays with each side: which answers renew a lease and from
// which send time, how long a lease lasts (a part of the session timeout,
// or of a generation's term), and, for ZooKeeper, a lease of each session
// of a zkutil.Session, all of them signalled on one Signal.
package lease
