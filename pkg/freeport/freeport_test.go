package freeport_test

import (
	"net"
	"testing"

	"github.com/gatehouse/gatehouse/pkg/freeport"
)

func TestAddr(t *testing.T) {
	seen := map[string]bool{}
	for range 20 {
		addr := freeport.Addr(t)
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("%s: %v", addr, err)
		}
		defer l.Close() // held, so no later Addr returns it
		if seen[addr] {
			t.Fatalf("%s returned twice", addr)
		}
		seen[addr] = true
		if p := l.Addr().(*net.TCPAddr).Port; p < 20000 || p >= 32000 {
			t.Errorf("port %d is outside 20000–31999", p)
		}
	}
}
