package credential

import (
	"testing"
	"time"
)

// TestVerified: a hash is known for ttl after Add, forgotten by Forget, and
// the set never holds more than max.
func TestVerified(t *testing.T) {
	now := time.Unix(0, 0)
	v := NewVerified(2, time.Minute)
	v.now = func() time.Time { return now }
	a, b, c := Hash("a"), Hash("b"), Hash("c")
	v.Add(a)
	if !v.Has(a) || v.Has(b) {
		t.Fatal("Has after Add")
	}
	now = now.Add(time.Minute)
	if v.Has(a) {
		t.Error("a hash outlived its ttl")
	}
	v.Add(a)
	v.Add(b)
	v.Add(c)
	if n := len(v.seen); n > 2 {
		t.Errorf("%d hashes held, want at most 2", n)
	}
	if !v.Has(c) {
		t.Error("the newest hash was evicted")
	}
	v.Forget(c)
	if v.Has(c) {
		t.Error("Forget")
	}
	if v.Has([]byte("short")) {
		t.Error("a hash of another length")
	}
}
