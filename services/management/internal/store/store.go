// Package store keeps the management service's records in bbolt: users and
// their key hashes, and API definitions — classic and Tyk OAS — as the exact
// bytes received, with indexes for db ids, categories, staged copies and
// child versions.
//
// Everything that changes an API goes through the methods of Tx, which keep
// the indexes right inside the caller's transaction. A caller can therefore
// commit many APIs' changes in one transaction (one fsync), as migration does:
//
//	err := st.Update(func(tx *store.Tx) error {
//		for _, id := range ids {
//			classic, err := tx.API(id)
//			...
//			if err := tx.PutAPI(base); err != nil { return err }   // OAS record, same DBID
//			...
//		}
//		return nil
//	})
package store

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/gatehouse/gatehouse/pkg/boltstore"
)

// schemaVersion is the layout below; raise it with a migration when it changes.
const schemaVersion = 1

// Buckets, all declared here and created when the store opens.
var (
	apisBucket      = []byte("apis")            // api_id → API record (encodeAPI)
	dbIDBucket      = []byte("api_db_ids")      // db id → api_id
	catIndexBucket  = []byte("api_categories")  // u16 len ‖ category ‖ api_id → empty
	catCountBucket  = []byte("category_counts") // category → number of APIs (uint64 big-endian)
	stagedBucket    = []byte("api_staged")      // classic api_id → its staged copy's api_id
	childBucket     = []byte("api_children")    // u16 len ‖ base api_id ‖ child api_id → empty
	usersBucket     = []byte("users")           // user id → User (JSON)
	userKeyBucket   = []byte("user_keys")       // SHA-256 of the access key → user id
	userEmailBucket = []byte("user_emails")     // lower-cased email → user id
	allBuckets      = [][]byte{apisBucket, dbIDBucket, catIndexBucket, catCountBucket, stagedBucket, childBucket,
		usersBucket, userKeyBucket, userEmailBucket}
)

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
)

// Store is the management service's bbolt store.
type Store struct{ db *bolt.DB }

// Open opens the store file at path.
func Open(path string) (*Store, error) {
	db, err := boltstore.Open(path, schemaVersion, allBuckets...)
	if err != nil {
		return nil, err
	}
	return &Store{db: db}, nil
}

// Close closes the file.
func (s *Store) Close() error { return s.db.Close() }

// Tx is one store transaction; its methods keep every index consistent.
// It is valid only inside the function given to Update or View; values it
// returns are copies and stay valid after.
type Tx struct{ tx *bolt.Tx }

// Update runs fn in one read-write transaction, committed (and fsynced)
// when fn returns nil and rolled back otherwise.
func (s *Store) Update(fn func(*Tx) error) error {
	return s.db.Update(func(tx *bolt.Tx) error { return fn(&Tx{tx: tx}) })
}

// View runs fn in one read-only transaction.
func (s *Store) View(fn func(*Tx) error) error {
	return s.db.View(func(tx *bolt.Tx) error { return fn(&Tx{tx: tx}) })
}

// NewDBID returns a fresh 24-hex db id (4 bytes of time, 8 random), like a
// MongoDB ObjectId. PutAPI and PutConverted refuse one that another API
// holds, which 64 random bits make practically impossible.
func NewDBID() string {
	b := make([]byte, 12)
	binary.BigEndian.PutUint32(b, uint32(time.Now().Unix()))
	rand.Read(b[4:])
	return hex.EncodeToString(b)
}

// NewDBID returns a fresh db id that is unused in this transaction's view.
func (t *Tx) NewDBID() string {
	for {
		if id := NewDBID(); t.tx.Bucket(dbIDBucket).Get([]byte(id)) == nil {
			return id
		}
	}
}

// NewAPIID returns a fresh api_id: 32 lowercase hex, unused in this transaction's view.
func (t *Tx) NewAPIID() string {
	for {
		b := make([]byte, 16)
		rand.Read(b)
		id := hex.EncodeToString(b)
		if t.tx.Bucket(apisBucket).Get([]byte(id)) == nil {
			return id
		}
	}
}

// Check runs the engine's consistency check and verifies that every index
// agrees with the records; tests of the store and of its users call it.
func (s *Store) Check() error {
	return s.db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		for _, name := range allBuckets {
			if tx.Bucket(name) == nil {
				return fmt.Errorf("bucket %s missing", name)
			}
		}
		return checkIndexes(tx)
	})
}
