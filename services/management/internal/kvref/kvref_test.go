package kvref

import "testing"

func TestIs(t *testing.T) {
	for s, want := range map[string]bool{
		"env://LISTEN_PATH": true, "secrets://lp": true, "consul://apis/orders": true, "vault://orders.path": true,
		"/orders/": false, "env://": false, "ENV://X": false, "http://x": false, "": false, " env://X": false,
	} {
		if got := Is(s); got != want {
			t.Errorf("Is(%q) = %v, want %v", s, got, want)
		}
	}
}
