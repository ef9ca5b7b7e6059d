package kv

import "sync"

// Memo holds one value computed from the key space at one revision (a
// Revisioned read's, or CommittedOf's): a read at that revision may answer
// it again instead of computing it. It holds the latest revision's value
// it was given; it is safe for concurrent use. The value is shared: a
// caller that changes what it gets must copy it.
type Memo[T any] struct {
	mu   sync.Mutex
	rev  int64
	v    T
	held bool
}

// Get returns the value held for rev.
func (m *Memo[T]) Get(rev int64) (T, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.held || m.rev != rev {
		var zero T
		return zero, false
	}
	return m.v, true
}

// Set holds v as rev's, unless a later revision's is held already.
func (m *Memo[T]) Set(rev int64, v T) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.held || rev >= m.rev {
		m.rev, m.v, m.held = rev, v, true
	}
}
