package javastr

import (
	"slices"
	"testing"
	"unicode/utf16"
)

// TestCompare checks Java's String.compareTo order, which sorts by UTF-16
// code units.
func TestCompare(t *testing.T) {
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
		if got := Compare(tt.a, tt.b); got != tt.want {
			t.Errorf("Compare(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := Compare(tt.b, tt.a); got != -tt.want {
			t.Errorf("Compare(%q, %q) = %d, want %d", tt.b, tt.a, got, -tt.want)
		}
	}
	// Invalid UTF-8 reads as U+FFFD in both; byte order breaks the tie.
	if got := Compare("\xff", "\xfe"); got != 1 {
		t.Errorf(`Compare("\xff", "\xfe") = %d, want 1`, got)
	}
}

func FuzzCompare(f *testing.F) {
	f.Add("c-10", "c-2")
	f.Add("\uFF5E", "\U0001D11E")
	f.Add("\xff", "\xfe")
	f.Add("ab", "a")
	f.Fuzz(func(t *testing.T, a, b string) {
		got := Compare(a, b)
		if rev := Compare(b, a); rev != -got {
			t.Fatalf("Compare(%q, %q) = %d but Compare(b, a) = %d", a, b, got, rev)
		}
		if (got == 0) != (a == b) {
			t.Fatalf("Compare(%q, %q) = %d", a, b, got)
		}
		if want := slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b))); want != 0 && got != want {
			t.Fatalf("Compare(%q, %q) = %d, UTF-16 order says %d", a, b, got, want)
		}
	})
}
