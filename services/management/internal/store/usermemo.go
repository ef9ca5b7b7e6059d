package store

import (
	"bytes"
	"maps"
	"sync"
)

// maxUserMemo bounds how many decoded users userMemo holds; past it the
// memo starts again empty.
const maxUserMemo = 1024

// userMemo remembers the users UserByKeyHash decoded, by id, with the
// stored bytes they were decoded from. Every REST and gRPC call looks its
// caller up, and decoding the record was most of that lookup's time; a
// record whose stored bytes are unchanged decodes to the same user, so the
// memo answers only when the bytes just read equal the ones remembered: it
// never answers a read with anything older than what the read found (a
// deactivated or changed user is decoded afresh).
type userMemo struct {
	mu    sync.Mutex
	users map[string]memoUser
}

type memoUser struct {
	raw  []byte
	user User
}

// decode returns the user stored as raw under id: decoded by decodeUser,
// or a copy of the memo's when raw is what it was decoded from.
func (m *userMemo) decode(id string, raw []byte) (User, error) {
	m.mu.Lock()
	held, ok := m.users[id]
	m.mu.Unlock()
	if ok && bytes.Equal(held.raw, raw) {
		return held.user.clone(), nil
	}
	u, err := decodeUser(id, raw)
	if err != nil {
		return User{}, err
	}
	m.mu.Lock()
	if m.users == nil || len(m.users) >= maxUserMemo {
		m.users = make(map[string]memoUser)
	}
	m.users[id] = memoUser{raw: bytes.Clone(raw), user: u.clone()}
	m.mu.Unlock()
	return u, nil
}

// clone is u with its own permissions and key hash, so that a caller that
// changes them changes nothing another caller holds.
func (u User) clone() User {
	u.Permissions = maps.Clone(u.Permissions)
	u.KeyHash = bytes.Clone(u.KeyHash)
	return u
}

// callerMemo remembers, by key hash, the user UserByKeyHash found and the
// revision it read (kv.Revisioned). It answers only while the engine's
// committed revision (kv.Committed) is still that one: no write at all, so
// neither the user nor its key changed, since the read it repeats. An engine
// that cannot name its committed revision (etcd, which other replicas
// write) is read every time.
type callerMemo struct {
	mu      sync.Mutex
	callers map[string]revUser
}

type revUser struct {
	rev  int64
	user User
}

// get returns a copy of the user found for hash at rev.
func (m *callerMemo) get(hash []byte, rev int64) (User, bool) {
	m.mu.Lock()
	held, ok := m.callers[string(hash)]
	m.mu.Unlock()
	if !ok || held.rev != rev {
		return User{}, false
	}
	return held.user.clone(), true
}

// set remembers u as what hash found at rev.
func (m *callerMemo) set(hash []byte, rev int64, u User) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.callers == nil || len(m.callers) >= maxUserMemo {
		m.callers = make(map[string]revUser)
	}
	m.callers[string(hash)] = revUser{rev: rev, user: u.clone()}
}
