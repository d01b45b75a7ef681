package fetch

import (
	"testing"

	"github.com/zkconsumer/zkconsumer/internal/javastr"
)

// Golden values from Java 17 (jshell): ((31*s.hashCode()+p) & 0x7fffffff) % 3.
func TestFetcherID(t *testing.T) {
	for _, tc := range []struct {
		topic string
		want  [4]int // partitions 0..3 over 3 fetchers
	}{
		{"", [4]int{0, 1, 2, 0}},
		{"test", [4]int{1, 2, 0, 1}},
		{"hello", [4]int{2, 0, 1, 2}},
		{"orders", [4]int{0, 1, 2, 0}}, // negative hash: & 0x7fffffff, not Math.abs
		{"my-topic-with-a-long-name", [4]int{2, 0, 1, 2}},
		{"zkconsumer-fetch", [4]int{1, 2, 0, 1}},
		{"été", [4]int{0, 1, 2, 0}},
		{"😀x", [4]int{1, 2, 0, 1}},
	} {
		for p := range 4 {
			if got := fetcherID(tc.topic, int32(p), 3); got != tc.want[p] {
				t.Errorf("fetcherID(%q, %d, 3) = %d, want %d", tc.topic, p, got, tc.want[p])
			}
		}
	}
	for p := range int32(10) {
		if got := fetcherID("orders", p, 1); got != 0 {
			t.Errorf("fetcherID with one fetcher = %d", got)
		}
	}
	// "polygenelubricants".hashCode() is Integer.MIN_VALUE, and so is
	// 31 times it: Utils.abs gives 0 where Math.abs would stay negative.
	if h := javastr.Hash("polygenelubricants"); h != -2147483648 {
		t.Fatalf("hash %d", h)
	}
	if got := fetcherID("polygenelubricants", 0, 7); got != 0 {
		t.Errorf("fetcherID(MinInt32) = %d, want 0", got)
	}
	if got := fetcherID("polygenelubricants", 5, 7); got != 5 {
		t.Errorf("fetcherID(MinInt32+5) = %d, want 5", got)
	}
}
