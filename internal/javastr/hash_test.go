package javastr

import "testing"

func TestHashMatchesJava(t *testing.T) {
	// Values computed with Java 17's String.hashCode.
	for s, want := range map[string]int32{
		"":                          0,
		"events-0":                  278135932,
		"events-10":                 32279379,
		"[events,0]":                -670581339,
		"polygenelubricants":        -2147483648,
		"Aa":                        2112,
		"BB":                        2112,
		"a":                         97,
		"test":                      3556498,
		"hello":                     99162322,
		"topic":                     110546223,
		"orders":                    -1008770331,
		"my-topic-with-a-long-name": 1830258792,
		"zkconsumer-fetch":          -1501072492,
		"été":                       227742,
		"😀x":                        54959989, // a surrogate pair
	} {
		if got := Hash(s); got != want {
			t.Errorf("Hash(%q) = %d, want %d", s, got, want)
		}
	}
}
