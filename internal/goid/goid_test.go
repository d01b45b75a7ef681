package goid

import "testing"

func TestCurrentTellsGoroutinesApart(t *testing.T) {
	here := Current()
	if here == 0 {
		t.Fatal("no id for the test's goroutine")
	}
	if Current() != here {
		t.Fatal("the same goroutine has two ids")
	}
	other := make(chan uint64)
	go func() { other <- Current() }()
	if id := <-other; id == 0 || id == here {
		t.Fatalf("another goroutine has id %d, the test's %d", id, here)
	}
}
