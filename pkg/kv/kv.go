// Package kv is Gatehouse's storage seam: the small transactional key-value
// interface that every service's domain store is written against once. The
// engines behind it (an embedded bbolt file, an etcd cluster) live in their
// own packages; nothing outside an engine imports bbolt or the etcd client.
//
// The model is one ordered key space per service. Keys are byte strings that
// sort bytewise; a domain store lays its records out under prefixes
// ("llm/", "user/", ...) and declares that layout in one file.
//
// Transactions are serializable. A read-write transaction's function may run
// more than once (an engine retries it when another writer committed a
// conflicting change first), so it must derive everything it returns from what
// it reads inside the transaction and must have no other side effects: assign
// results to variables captured from outside only as the last thing it does,
// and never append to them.
package kv

import (
	"context"
	"errors"
	"math"
)

var (
	// ErrUnavailable means the engine cannot reach its backend (etcd quorum
	// lost, no endpoint answering). Services answer 503 "store unavailable".
	ErrUnavailable = errors.New("store unavailable")
	// ErrTooLarge means a write does not fit in one transaction of the engine
	// (etcd's request size or operation count). Nothing was written; services
	// answer 413 with the error's message, which names the limit.
	ErrTooLarge = errors.New("write too large for the store")
	// ErrConflict means a read-write transaction kept conflicting with other
	// writers and the engine gave up after its bounded retries.
	ErrConflict = errors.New("store conflict: too many concurrent writers")
	// ErrNoSpace means the backend refuses writes because its space quota
	// is exhausted (etcd's NOSPACE alarm): reads still work. Services answer
	// writes 503 "store full" and /readyz 503 until an operator frees space
	// (compaction, defragmentation) and disarms the alarm.
	ErrNoSpace = errors.New("store full: the backend's space quota is exhausted")
	// ErrSeqExhausted means a sequence passed the largest value its caller
	// allows (see NextSeq's callers) or 2^64-1.
	ErrSeqExhausted = errors.New("no ids left")
)

// ErrStop ends a Scan early without an error.
var ErrStop = errors.New("kv: stop scan")

// Engine is a transactional, ordered key-value store.
type Engine interface {
	// View runs fn in a read-only transaction that sees one consistent
	// snapshot, including every write acknowledged before View was called
	// (linearizable). fn's error is returned as is.
	View(ctx context.Context, fn func(ReadTx) error) error
	// Update runs fn in a serializable read-write transaction and commits
	// what it wrote, durably, before returning; fn's error aborts the
	// transaction (nothing is written) and is returned as is. fn may run more
	// than once; see the package comment.
	Update(ctx context.Context, fn func(WriteTx) error) error
	// Ready reports whether the backend answers now (readiness probes).
	Ready(ctx context.Context) error
	// Close releases the engine. Transactions must not start after it.
	Close() error
}

// ReadTx reads inside a transaction.
type ReadTx interface {
	// Get returns key's value, or nil and no error when the key is absent.
	// The slice is valid only until the transaction ends: copy what outlives it.
	Get(key []byte) ([]byte, error)
	// Scan calls fn for each key that starts with prefix and is at or after
	// start (every key under prefix when start is nil), in ascending key
	// order, with the same lifetime rule for both slices as Get. fn returning
	// ErrStop ends the scan and Scan returns nil; any other error is returned.
	// In a WriteTx, fn may Put and Delete; the scan then goes on after the
	// current key, and whether it meets keys fn wrote further on is not
	// defined.
	Scan(prefix, start []byte, fn func(key, value []byte) error) error
	// Count returns how many keys start with prefix.
	Count(prefix []byte) (int, error)
}

// Revisioned is a ReadTx that can name the state of the key space it reads:
// two read-only transactions of one engine that report the same revision
// read the same keys and values (bbolt's transaction id, the etcd watch
// cache's revision). A domain store memoises an answer computed from a whole
// range (the category counts) by it. ok is false when the transaction cannot
// tell (a read-write transaction, an etcd read outside the cache).
type Revisioned interface {
	Revision() (rev int64, ok bool)
}

// Committed is an Engine that knows, without opening a transaction, the
// revision (Revisioned) a View opened now would read: bbolt, which only this
// process writes, and which counts its commits before it answers their
// callers. A domain store answers from memory what it read at that revision
// (the caller of a request, the category counts) while it has not moved. An
// engine that other processes write (etcd) does not implement it, so every
// read there goes to the engine.
type Committed interface {
	Committed() (rev int64, ok bool)
}

// CommittedOf is the committed revision of e, or of the engine e decorates
// (Unwrap, as CheckerOf finds its Checker), when it is Committed and knows
// it.
func CommittedOf(e Engine) (int64, bool) {
	if c, ok := find[Committed](e); ok {
		return c.Committed()
	}
	return 0, false
}

// RevisionOf is r's revision when r is Revisioned and knows it.
func RevisionOf(r ReadTx) (int64, bool) {
	if rv, ok := r.(Revisioned); ok {
		return rv.Revision()
	}
	return 0, false
}

// WriteTx reads and writes inside a read-write transaction. A transaction
// reads its own writes.
type WriteTx interface {
	ReadTx
	// Put sets key to value. The engine may keep value until commit, so the
	// caller must not change it afterwards.
	Put(key, value []byte) error
	// Delete removes key; removing an absent key is no error. The engine
	// keeps no reference to key: the caller may reuse it on return.
	Delete(key []byte) error
	// NextSeq advances the sequence called name and returns its new value,
	// starting at 1. A value is never handed out twice, even after the record
	// that used it is deleted; a transaction that does not commit hands out
	// nothing. Sequences live beside the key space: Get, Scan and Count do
	// not see them.
	NextSeq(name string) (uint64, error)
}

// NextID32 advances the sequence called name (see WriteTx.NextSeq) and
// returns its value as a uint32 record id; past 2^32-1 it answers
// ErrSeqExhausted, so an id is never reused by wrapping around.
func NextID32(tx WriteTx, name string) (uint32, error) {
	n, err := tx.NextSeq(name)
	if err != nil {
		return 0, err
	}
	if n > math.MaxUint32 {
		return 0, ErrSeqExhausted
	}
	return uint32(n), nil
}
