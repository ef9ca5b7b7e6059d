// Package store keeps the management service's records in a kv engine (an
// embedded bbolt file or an etcd cluster, package kv): users and their key
// hashes, and API definitions — classic and Tyk OAS — as the exact bytes
// received, with indexes for db ids, categories, staged copies and child
// versions. keys.go declares the whole key layout; the store owns its value
// encoding.
//
// Everything that changes an API goes through the methods of Tx, which keep
// the indexes right inside the caller's transaction, so that one API's
// changes (a migration's base, versions and removed records) commit
// together:
//
//	err := st.Update(ctx, func(tx *store.Tx) error {
//		classic, err := tx.API(id)
//		...
//		return tx.PutAPI(base, classic.Revision)
//	})
//
// An update function may run more than once (kv.Engine.Update): it derives
// everything from what it reads in its transaction and hands results out
// only by assignment, as its last step.
package store

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/gatehouse/gatehouse/pkg/kv"
)

// schemaVersion is the layout of keys.go; raise it with an upgrade when it
// changes. Version 1 was the bucket-per-index bbolt file before the kv seam
// (see legacy.go).
const schemaVersion = 2

var (
	// ErrNotFound means no record has that id.
	ErrNotFound = errors.New("not found")
	// ErrAlreadyExists means the id (API ID, db id) is taken.
	ErrAlreadyExists = errors.New("already exists")
	// ErrConflict means a unique value (a user's email) is taken.
	ErrConflict = errors.New("conflict")
	// ErrCorrupt means a stored value cannot be read.
	ErrCorrupt = errors.New("stored value unreadable")
	// ErrInvalid means a record handed to the store breaks its rules.
	ErrInvalid = errors.New("invalid record")
	// ErrNotClassic means the API is a Tyk OAS API where a classic one is needed.
	ErrNotClassic = errors.New("not a classic API")
	// ErrNotOAS means the API is a classic API where a Tyk OAS one is needed.
	ErrNotOAS = errors.New("not a Tyk OAS API")
	// ErrLastAdmin means a change would leave no active admin.
	ErrLastAdmin = errors.New("at least one admin must remain")
	// errReadOnly means a write was tried in a View.
	errReadOnly = errors.New("store: write in a read-only transaction")
)

// Store is the management service's domain store over a kv engine.
type Store struct {
	e          kv.Engine
	orgID      string
	onCommit   func(Change)
	categories kv.Memo[[]CategoryCount] // CategoryCounts' last answer, by revision
	users      userMemo                 // UserByKeyHash's decoded users, by their stored bytes
	callers    callerMemo               // UserByKeyHash's answers, by key hash, while nothing is committed
}

// Change says what a committed transaction changed that gateways load.
type Change uint8

// The changes a transaction records (Tx.Changed).
const (
	APIAdded Change = 1 << iota
	APIUpdated
	APIRemoved
	PolicyChanged
)

// OnCommit makes fn run after every committed Update that changed APIs or
// policies, in the committing process, with what changed (how the gateways'
// reload notifications learn of every write, whichever path made it). Call
// it before the store is used; fn must not block.
func (s *Store) OnCommit(fn func(Change)) { s.onCommit = fn }

// Open brings e's key space to this layout (converting a file of the
// earlier bbolt layout, in one transaction) and returns the store, which
// owns e from then on. The first open of a key space creates the
// installation's organisation id; later opens (and other replicas) read it.
func Open(ctx context.Context, e kv.Engine) (*Store, error) {
	if err := kv.EnsureSchema(ctx, e, "management", schemaVersion, upgrade); err != nil {
		return nil, fmt.Errorf("management store: %w", err)
	}
	var org string
	err := e.Update(ctx, func(w kv.WriteTx) error {
		v, err := w.Get(orgIDKey)
		switch {
		case err != nil:
			return err
		case v == nil:
			id := NewDBID()
			if err := w.Put(orgIDKey, []byte(id)); err != nil {
				return err
			}
			org = id
		case !IsDBID(string(v)):
			return fmt.Errorf("%w: organisation id %q", ErrCorrupt, v)
		default:
			org = string(v)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("management store: %w", err)
	}
	return &Store{e: e, orgID: org}, nil
}

// OrgID is the installation's organisation id: 24 lowercase hex, the same
// for every user and written into every classic definition that has none.
func (s *Store) OrgID() string { return s.orgID }

// Close closes the engine.
func (s *Store) Close() error { return s.e.Close() }

// Ready reports whether the engine answers (readiness).
func (s *Store) Ready(ctx context.Context) error { return s.e.Ready(ctx) }

// Tx is one store transaction; its methods keep every index consistent.
// It is valid only inside the function given to Update or View; values it
// returns are copies and stay valid after.
type Tx struct {
	r       kv.ReadTx
	w       kv.WriteTx // nil in View
	changed Change     // what this run of the transaction changed
	// delBuf holds the key of delKey and delPair: kv.WriteTx.Delete keeps no
	// key, so the index entries and record a delete removes are named
	// without an allocation each (the Tx is on the heap already)
	delBuf [96]byte
}

// Update runs fn in one serializable read-write transaction, committed when
// fn returns nil. fn may run more than once.
func (s *Store) Update(ctx context.Context, fn func(*Tx) error) error {
	var last *Tx // the run that committed
	err := s.e.Update(ctx, func(w kv.WriteTx) error {
		tx := &Tx{r: w, w: w}
		last = tx
		return fn(tx)
	})
	if err == nil && last != nil && last.changed != 0 && s.onCommit != nil {
		s.onCommit(last.changed)
	}
	return err
}

// View runs fn in one read-only transaction: one consistent snapshot.
func (s *Store) View(ctx context.Context, fn func(*Tx) error) error {
	return s.e.View(ctx, func(r kv.ReadTx) error { return fn(&Tx{r: r}) })
}

func (t *Tx) put(k, v []byte) error {
	if t.w == nil {
		return errReadOnly
	}
	return t.w.Put(k, v)
}

func (t *Tx) del(k []byte) error {
	if t.w == nil {
		return errReadOnly
	}
	return t.w.Delete(k)
}

// delKey is del(key(prefix, name)), the key built in the Tx's own buffer.
func (t *Tx) delKey(prefix []byte, name string) error {
	return t.del(appendKey(t.delBuf[:0], prefix, name))
}

// delPair is del(pairKey(prefix, a, b)), the key built in the Tx's own
// buffer.
func (t *Tx) delPair(prefix []byte, a, b string) error {
	return t.del(appendPair(t.delBuf[:0], prefix, a, b))
}

// NewDBID returns a fresh 24-hex db id laid out as a MongoDB ObjectId (the
// Tyk Dashboard's ids): 4 bytes of time in seconds, 5 random bytes drawn
// once per process, and a 3-byte counter that starts at a random value. So
// the ids one process makes ascend (until the counter wraps within a
// second), and the db id index of APIs created together sits together: a
// commit that deletes or creates a run of them changes a page or two of it,
// not a page per API. PutAPI refuses one that another API holds (another
// process drawing the same 5 bytes and counter in the same second).
func NewDBID() string {
	var b [12]byte
	binary.BigEndian.PutUint32(b[:4], uint32(time.Now().Unix()))
	copy(b[4:9], dbIDProcess[:])
	n := dbIDCounter.Add(1)
	b[9], b[10], b[11] = byte(n>>16), byte(n>>8), byte(n)
	return hex.EncodeToString(b[:])
}

// dbIDProcess and dbIDCounter are NewDBID's per-process random value and
// counter.
var (
	dbIDProcess [5]byte
	dbIDCounter atomic.Uint32
)

func init() {
	var seed [4]byte
	rand.Read(dbIDProcess[:])
	rand.Read(seed[:])
	dbIDCounter.Store(binary.BigEndian.Uint32(seed[:]))
}

// NewAPIID returns a fresh api_id: 32 lowercase hex (128 random bits, so
// PutAPI, which refuses a taken one, practically never sees one).
func NewAPIID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Check verifies that every index agrees with the records and, when the
// engine has one (bbolt's), runs the engine's own consistency check, under
// whatever wraps it (kv.CheckerOf); tests of the store and of its users
// call it.
func (s *Store) Check(ctx context.Context) error {
	if c, ok := kv.CheckerOf(s.e); ok {
		if err := c.Check(); err != nil {
			return err
		}
	}
	return s.View(ctx, checkIndexes)
}
