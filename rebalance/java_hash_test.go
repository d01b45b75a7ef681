package rebalance

import (
	"slices"
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

// TestJavaStringCompare checks Java's String.compareTo order, which sorts
// by UTF-16 code units.
func TestJavaStringCompare(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "a", -1},
		{"c-10", "c-2", -1},
		{"c-1", "c-10", -1},
		{"g_c1-9", "g_c2-0", -1},
		{"B", "a", -1},
		{"é", "e", 1},
		// U+FF5E sorts after U+1D11E in Java (its surrogate D834 is
		// smaller), unlike Go's byte order.
		{"\uFF5E", "\U0001D11E", 1},
		{"\U0001D11E", "\U0001D11F", -1},
		{"\U0001D11E", "\U0001D11E", 0},
	}
	for _, tt := range tests {
		if got := javaStringCompare(tt.a, tt.b); got != tt.want {
			t.Errorf("javaStringCompare(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := javaStringCompare(tt.b, tt.a); got != -tt.want {
			t.Errorf("javaStringCompare(%q, %q) = %d, want %d", tt.b, tt.a, got, -tt.want)
		}
	}
	// Invalid UTF-8 reads as U+FFFD in both; byte order breaks the tie.
	if got := javaStringCompare("\xff", "\xfe"); got != 1 {
		t.Errorf(`javaStringCompare("\xff", "\xfe") = %d, want 1`, got)
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

func FuzzJavaStringCompare(f *testing.F) {
	f.Add("c-10", "c-2")
	f.Add("\uFF5E", "\U0001D11E")
	f.Add("\xff", "\xfe")
	f.Add("ab", "a")
	f.Fuzz(func(t *testing.T, a, b string) {
		got := javaStringCompare(a, b)
		if rev := javaStringCompare(b, a); rev != -got {
			t.Fatalf("compare(%q, %q) = %d but compare(b, a) = %d", a, b, got, rev)
		}
		if (got == 0) != (a == b) {
			t.Fatalf("compare(%q, %q) = %d", a, b, got)
		}
		if want := slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b))); want != 0 && got != want {
			t.Fatalf("compare(%q, %q) = %d, UTF-16 order says %d", a, b, got, want)
		}
	})
}
