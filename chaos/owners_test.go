package chaos

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/zkconsumer/zkconsumer/internal/strategyname"
	"github.com/zkconsumer/zkconsumer/internal/zksession"
)

// fakeZK is a tree of nodes for readOwners.
type fakeZK map[string]string

func (z fakeZK) Children(_ context.Context, path string) ([]string, error) {
	var out []string
	found := false
	for p := range z {
		if p == path {
			found = true
		}
		if rest, ok := strings.CutPrefix(p, path+"/"); ok {
			found = true
			if name, _, _ := strings.Cut(rest, "/"); !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	if !found {
		return nil, zksession.ErrNoNode
	}
	return out, nil
}

func (z fakeZK) Get(_ context.Context, path string) ([]byte, zksession.Stat, error) {
	v, ok := z[path]
	if !ok {
		return nil, zksession.Stat{}, zksession.ErrNoNode
	}
	return []byte(v), zksession.Stat{}, nil
}

// A static member "a" and a wildcard member "b", two streams each, share
// t (4 partitions) by range; only b consumes u (2 partitions).
func groupTree() fakeZK {
	return fakeZK{
		"/consumers/g/ids/a":      `{"version":1,"subscription":{"t":2},"pattern":"static","timestamp":"1","assignment_strategy":"range"}`,
		"/consumers/g/ids/b":      `{"version":1,"subscription":{"[tu]":2},"pattern":"white_list","timestamp":"1","assignment_strategy":"range"}`,
		"/brokers/topics/t":       `{"version":1,"partitions":{"0":[0],"1":[0],"2":[0],"3":[0]}}`,
		"/brokers/topics/u":       `{"version":1,"partitions":{"0":[0],"1":[0]}}`,
		"/brokers/topics/other":   `{"version":1,"partitions":{"0":[0]}}`,
		"/consumers/g/owners/t/0": "a-0",
		"/consumers/g/owners/t/1": "a-1",
		"/consumers/g/owners/t/2": "b-0",
		"/consumers/g/owners/t/3": "b-1",
		"/consumers/g/owners/u/0": "b-0",
		"/consumers/g/owners/u/1": "b-1",
	}
}

func TestReadOwnersAgreesWithTheAssignor(t *testing.T) {
	check := readOwners(context.Background(), groupTree(), "g", strategyname.Range, map[string]string{"m0.1": "a", "m1.1": "b"})
	if !check.Converged {
		t.Fatalf("mismatches: %v", check.Mismatches)
	}
	if len(check.Expected) != 6 {
		t.Fatalf("expected owners %v", check.Expected)
	}
}

func TestReadOwnersReportsMismatches(t *testing.T) {
	z := groupTree()
	z["/consumers/g/owners/t/3"] = "a-1"
	delete(z, "/consumers/g/owners/u/1")
	z["/consumers/g/owners/other/0"] = "b-0"
	check := readOwners(context.Background(), z, "g", strategyname.Range, map[string]string{"m0.2": "a", "m1.1": "b", "m2.1": "c"})
	want := []string{
		"t-3 is owned by a-1; the assignor gives it to b-1",
		"u-1 has no owner; the assignor gives it to b-1",
		"running member m2.1 (c) is not registered",
	}
	if check.Converged || strings.Join(check.Mismatches, "\n") != strings.Join(want, "\n") {
		t.Fatalf("mismatches\n%s\nwant\n%s", strings.Join(check.Mismatches, "\n"), strings.Join(want, "\n"))
	}
}

func TestReadOwnersReportsAnotherStrategy(t *testing.T) {
	z := groupTree()
	z["/consumers/g/ids/b"] = `{"version":1,"subscription":{"[tu]":2},"pattern":"white_list","timestamp":"1","assignment_strategy":"roundrobin"}`
	check := readOwners(context.Background(), z, "g", strategyname.Range, map[string]string{"m0.1": "a", "m1.1": "b"})
	want := []string{`member b registered with partition.assignment.strategy "roundrobin", not "range"`}
	if check.Converged || strings.Join(check.Mismatches, "\n") != strings.Join(want, "\n") {
		t.Fatalf("mismatches\n%s\nwant\n%s", strings.Join(check.Mismatches, "\n"), strings.Join(want, "\n"))
	}
}
