package zksession

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/zkconsumer/zkconsumer/internal/testrig/testcluster"
	"github.com/zkconsumer/zkconsumer/internal/testrig/testwait"
)

// BenchmarkOwnerWrites creates and then deletes 200 ephemeral nodes under
// one parent, as a rebalance claims and releases 200 owner nodes: each node
// as its own request, all 200 in flight on the session's connection
// (pipelined), or in one transaction each way (multi). ZooKeeper is
// reached directly. Reports the milliseconds of the creates and of the
// deletes per op.
//
//	go test -run '^$' -bench BenchmarkOwnerWrites -benchtime 20x ./internal/zksession/
func BenchmarkOwnerWrites(b *testing.B) {
	const n = 200
	c := testcluster.Shared(b)
	ctx := testwait.Context(b, 30*time.Minute)
	s, err := Dial(ctx, SessionConfig{Connect: c.ZKConnect()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	base := "/" + testcluster.UniqueName("zksession-owner-writes")
	if err := s.EnsurePath(ctx, base); err != nil {
		b.Fatal(err)
	}
	paths := make([]string, n)
	for i := range paths {
		paths[i] = fmt.Sprintf("%s/%d", base, i)
	}
	each := func(f func(p string) error) {
		var wg sync.WaitGroup
		for _, p := range paths {
			wg.Go(func() {
				if err := f(p); err != nil {
					b.Error(err)
				}
			})
		}
		wg.Wait()
	}
	for _, mode := range []string{"pipelined", "multi"} {
		b.Run("mode="+mode, func(b *testing.B) {
			var creates, deletes time.Duration
			for b.Loop() {
				t := time.Now()
				if mode == "multi" {
					ops := make([]Op, n)
					for i, p := range paths {
						ops[i] = CreateEphemeralOp(p, []byte("c-0"))
					}
					if err := s.Multi(ctx, ops...); err != nil {
						b.Fatal(err)
					}
				} else {
					each(func(p string) error { return s.CreateEphemeral(ctx, p, []byte("c-0")) })
				}
				creates += time.Since(t)
				t = time.Now()
				if mode == "multi" {
					ops := make([]Op, n)
					for i, p := range paths {
						ops[i] = DeleteOp(p, 0)
					}
					if err := s.Multi(ctx, ops...); err != nil {
						b.Fatal(err)
					}
				} else {
					each(func(p string) error { return s.DeleteEphemeral(ctx, p, 0) })
				}
				deletes += time.Since(t)
			}
			b.ReportMetric(float64(creates.Microseconds())/1000/float64(b.N), "create-ms")
			b.ReportMetric(float64(deletes.Microseconds())/1000/float64(b.N), "delete-ms")
		})
	}
}
