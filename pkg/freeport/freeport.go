// Package freeport finds loopback ports for tests that must name a port
// before the process that listens on it starts (etcd members name each
// other's, a gateway's configuration names its own).
//
// A port found free can still be taken before it is bound. Ports are drawn
// below the kernel's usual ephemeral range (32768 and up), which outgoing
// connections and listeners on port 0 use, so in practice only another
// caller of this package can take one; callers that start a listener
// should still retry with a new port when the bind fails.
package freeport

import (
	"math/rand/v2"
	"net"
	"strconv"
	"testing"
)

const low, span = 20000, 12000 // ports 20000–31999

// Addr returns "127.0.0.1:port" for a port nothing listened on a moment ago.
func Addr(tb testing.TB) string {
	tb.Helper()
	for range 100 {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(low+rand.IntN(span)))
		if l, err := net.Listen("tcp", addr); err == nil {
			l.Close()
			return addr
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0") // the low range is full
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// Port is Addr's port number.
func Port(tb testing.TB) int {
	tb.Helper()
	_, p, _ := net.SplitHostPort(Addr(tb))
	n, _ := strconv.Atoi(p)
	return n
}
