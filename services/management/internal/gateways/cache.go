package gateways

import (
	"sync"

	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

// DerivedBudget bounds the bytes of derived classic definitions kept.
const DerivedBudget = 32 << 20

// derivedCache keeps the classic definitions derived from Tyk OAS documents,
// by API ID and record revision (a revision names one write of the record:
// store.API.Revision), so that a gateway's reload — every gateway reloads
// on every notification — derives only the APIs written since the last
// one. It holds at most DerivedBudget bytes; when full, half of it is
// dropped (whichever entries the map yields first).
type derivedCache struct {
	mu      sync.Mutex
	entries map[derivedKey][]byte
	bytes   int
}

type derivedKey struct {
	id       string
	revision uint64
	docLen   int // a second guard beside the revision
}

func keyOf(a store.API) derivedKey {
	return derivedKey{id: a.ID, revision: a.Revision, docLen: len(a.Doc)}
}

func (c *derivedCache) get(a store.API) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	def, ok := c.entries[keyOf(a)]
	return def, ok
}

func (c *derivedCache) put(a store.API, def []byte) {
	if len(def) > DerivedBudget/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[derivedKey][]byte{}
	}
	if c.bytes+len(def) > DerivedBudget {
		for k, v := range c.entries {
			delete(c.entries, k)
			c.bytes -= len(v)
			if c.bytes <= DerivedBudget/2 {
				break
			}
		}
	}
	k := keyOf(a)
	if old, ok := c.entries[k]; ok {
		c.bytes -= len(old)
	}
	c.entries[k] = def
	c.bytes += len(def)
}
