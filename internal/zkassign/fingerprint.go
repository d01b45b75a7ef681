package zkassign

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
)

// Fingerprint identifies the input of an assignment: the group's members,
// their threads per topic and the topics' partitions. It does not depend
// on which member computes it. Sticky members tag the assignment they
// agree on with it, so that a member follows only an assignment computed
// from the group as it reads it.
func Fingerprint(ctx AssignmentContext) (string, error) {
	nc, err := normalize(ctx)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	consumers := slices.Clone(nc.consumers)
	slices.Sort(consumers)
	for _, c := range slices.Compact(consumers) {
		fmt.Fprintf(h, "c%q\n", c)
	}
	for _, t := range slices.Sorted(maps.Keys(nc.threadsForTopic)) {
		fmt.Fprintf(h, "t%q", t)
		for _, th := range nc.threadsForTopic[t] {
			fmt.Fprintf(h, " %q", th.String())
		}
		h.Write([]byte{';'})
		for _, p := range nc.partitionsForTopic[t] {
			fmt.Fprintf(h, " %d", p)
		}
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
