package connector

import (
	"errors"
	"testing"
)

func TestTopicFilterValidate(t *testing.T) {
	for _, f := range []TopicFilter{Whitelist("orders.*"), Whitelist("a,b"), Blacklist("internal-.*")} {
		if err := f.Validate(); err != nil {
			t.Errorf("%+v: %v", f, err)
		}
	}
	// Look-ahead: Java accepts it, Go's regexp cannot reproduce it.
	var re *RegexError
	if err := Whitelist("orders(?=-eu)").Validate(); !errors.As(err, &re) {
		t.Errorf("look-ahead: got %v, want a *RegexError", err)
	}
	if err := Blacklist("").Validate(); err == nil {
		t.Error("an empty blacklist validated")
	}
}
