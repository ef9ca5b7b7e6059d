package gateways

import (
	"sync"
	"time"
)

// Wrong node secrets from one address: the first WrongFree within
// WrongWindow are answered at once, every further one after WrongDelay. With
// at most --max-conns-per-ip connections per address, an address so guesses
// at most that many secrets per WrongDelay (a few hundred a minute), not
// thousands a second per connection.
const (
	WrongFree   = 20
	WrongWindow = time.Minute
	WrongDelay  = time.Second
	// wrongAddrs bounds the addresses remembered; a full table forgets
	// those whose window ended, then all.
	wrongAddrs = 10_000
)

// wrongSecrets counts wrong node secrets by remote address.
type wrongSecrets struct {
	mu    sync.Mutex
	addrs map[string]*wrongCount
}

type wrongCount struct {
	since time.Time // the window's start
	n     int
}

// add records a wrong secret from addr at now and returns how long its
// answer waits.
func (w *wrongSecrets) add(addr string, now time.Time) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.addrs == nil {
		w.addrs = map[string]*wrongCount{}
	}
	c := w.addrs[addr]
	if c == nil || now.Sub(c.since) >= WrongWindow {
		if c == nil && len(w.addrs) >= wrongAddrs {
			for a, old := range w.addrs {
				if now.Sub(old.since) >= WrongWindow {
					delete(w.addrs, a)
				}
			}
			if len(w.addrs) >= wrongAddrs {
				clear(w.addrs)
			}
		}
		c = &wrongCount{since: now}
		w.addrs[addr] = c
	}
	c.n++
	if c.n <= WrongFree {
		return 0
	}
	return WrongDelay
}
