package heaptest

import "testing"

var sink []byte

// TestPeak: 32 MiB held while f runs shows; nothing held shows (almost) nothing.
func TestPeak(t *testing.T) {
	if got := Peak(func() { sink = make([]byte, 32<<20); sink[0] = 1 }); got < 32<<20 {
		t.Errorf("32 MiB allocated and held: peak %d bytes", got)
	}
	sink = nil
	if got := Peak(func() {}); got > 1<<20 {
		t.Errorf("nothing allocated: peak %d bytes", got)
	}
}
