package credential

import (
	"errors"
	"sync"
	"time"
)

// Verified remembers the hashes of keys found live a short while ago: the
// gRPC front door (grpcserver.FrontDoor) admits a stream whose key is here
// without a store read. It is a cheap first check only — the service's own
// authentication still checks every call against the store — so an entry
// may outlive its key by up to its age (a deleted key passes the front door
// and is refused by the full check, which then calls Forget). Bounded: at
// most max entries, each for ttl.
type Verified struct {
	mu   sync.Mutex
	ttl  time.Duration
	max  int
	seen map[[32]byte]time.Time // hash → when it was found live
	now  func() time.Time
}

// NewVerified returns an empty set keeping at most max hashes for ttl each.
func NewVerified(max int, ttl time.Duration) *Verified {
	return &Verified{ttl: ttl, max: max, seen: map[[32]byte]time.Time{}, now: time.Now}
}

func key(hash []byte) (k [32]byte, ok bool) {
	if len(hash) != len(k) {
		return k, false
	}
	copy(k[:], hash)
	return k, true
}

// Has reports whether hash was found live within the last ttl.
func (v *Verified) Has(hash []byte) bool {
	k, ok := key(hash)
	if !ok {
		return false
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	at, ok := v.seen[k]
	if ok && v.now().Sub(at) >= v.ttl {
		delete(v.seen, k)
		return false
	}
	return ok
}

// Add records that hash was found live now. When the set is full, expired
// entries go first, then arbitrary ones.
func (v *Verified) Add(hash []byte) {
	k, ok := key(hash)
	if !ok {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	now := v.now()
	if _, ok := v.seen[k]; !ok && len(v.seen) >= v.max {
		for h, at := range v.seen {
			if now.Sub(at) >= v.ttl {
				delete(v.seen, h)
			}
		}
		for h := range v.seen {
			if len(v.seen) < v.max {
				break
			}
			delete(v.seen, h)
		}
	}
	v.seen[k] = now
}

// Forget drops hash (its key was refused by the full check).
func (v *Verified) Forget(hash []byte) {
	if k, ok := key(hash); ok {
		v.mu.Lock()
		delete(v.seen, k)
		v.mu.Unlock()
	}
}

// Found turns a lookup's error into whether the key was found: notFound
// (matched with errors.Is) is false without an error.
func Found(err, notFound error) (bool, error) {
	if errors.Is(err, notFound) {
		return false, nil
	}
	return err == nil, err
}
