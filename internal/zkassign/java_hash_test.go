package zkassign

import (
	"testing"
	"unicode/utf16"
)

// TestJavaStringHash checks values printed by a JVM's String.hashCode.
func TestJavaStringHash(t *testing.T) {
	tests := []struct {
		s    string
		want int32
	}{
		{"", 0},
		{"Aa", 2112},
		{"BB", 2112},
		{"[events,0]", -670581339},
		{"[events,10]", 686814630},
		{"events-0", 278135932},
		{"events-10", 32279379},
		{"t1-0", 3504288},
		{"[t2,2]", -1581052642},
		{"é", 233},
		{"\U0001D11Ex", 54944334}, // supplementary rune: two UTF-16 units
		{"the quick brown fox jumps over the lazy dog", -2082818701},
	}
	for _, tt := range tests {
		if got := javaStringHash(tt.s); got != tt.want {
			t.Errorf("javaStringHash(%q) = %d, want %d", tt.s, got, tt.want)
		}
	}
}

// javaHashReference is a second, independent computation of
// String.hashCode: encode to UTF-16, then fold with unsigned arithmetic.
func javaHashReference(s string) int32 {
	var h uint32
	for _, u := range utf16.Encode([]rune(s)) {
		h = h*31 + uint32(u)
	}
	return int32(h)
}

func FuzzJavaStringHash(f *testing.F) {
	for _, s := range []string{"", "Aa", "[events,10]", "\U0010FFFF", "\xff\xfe", "\uFFFF\U00010000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := javaStringHash(s), javaHashReference(s); got != want {
			t.Errorf("javaStringHash(%q) = %d, reference %d", s, got, want)
		}
	})
}
