// Package store keeps the studio's records in bbolt: LLM settings, users and
// the index from API-key hash to user.
package store

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	studiov1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/studio/v1"
	"github.com/gatehouse/gatehouse/pkg/boltstore"
)

// schemaVersion is the layout below; raise it with a migration when it changes.
const schemaVersion = 1

// Buckets, all declared here and created when the store opens.
var (
	llmBucket   = []byte("llm_settings") // id (uint32 big-endian) → LlmSettingsAttributes (protobuf)
	userBucket  = []byte("users")        // id (uint32 big-endian) → User (JSON)
	keyBucket   = []byte("user_keys")    // SHA-256 of the API key → user id
	allBuckets  = [][]byte{llmBucket, userBucket, keyBucket}
	errNoBucket = errors.New("store: bucket missing")
)

var (
	// ErrNotFound means no record has that id.
	ErrNotFound = errors.New("not found")
	// ErrIDsExhausted means every uint32 id has been handed out.
	ErrIDsExhausted = boltstore.ErrIDsExhausted
)

// Store is the studio's bbolt store.
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

// LlmSettings is a stored record.
type LlmSettings struct {
	ID    uint32
	Attrs *studiov1.LlmSettingsAttributes
}

// CreateLlmSettings stores attrs under a new id.
func (s *Store) CreateLlmSettings(_ context.Context, attrs *studiov1.LlmSettingsAttributes) (uint32, error) {
	val, err := proto.MarshalOptions{Deterministic: true}.Marshal(attrs)
	if err != nil {
		return 0, err
	}
	var id uint32
	err = s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(llmBucket)
		if id, err = boltstore.NextID(b); err != nil {
			return err
		}
		return b.Put(boltstore.Key(id), val)
	})
	return id, err
}

// GetLlmSettings reads one record.
func (s *Store) GetLlmSettings(_ context.Context, id uint32) (*studiov1.LlmSettingsAttributes, error) {
	var attrs *studiov1.LlmSettingsAttributes
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		attrs, err = decodeLlm(tx.Bucket(llmBucket).Get(boltstore.Key(id)))
		return err
	})
	return attrs, err
}

// UpdateLlmSettings runs update on the stored record inside one transaction
// and stores the result unless update fails.
func (s *Store) UpdateLlmSettings(_ context.Context, id uint32, update func(*studiov1.LlmSettingsAttributes) error) (*studiov1.LlmSettingsAttributes, error) {
	var attrs *studiov1.LlmSettingsAttributes
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(llmBucket)
		var err error
		if attrs, err = decodeLlm(b.Get(boltstore.Key(id))); err != nil {
			return err
		}
		if err := update(attrs); err != nil {
			return err
		}
		val, err := proto.MarshalOptions{Deterministic: true}.Marshal(attrs)
		if err != nil {
			return err
		}
		return b.Put(boltstore.Key(id), val)
	})
	return attrs, err
}

// DeleteLlmSettings removes a record.
func (s *Store) DeleteLlmSettings(_ context.Context, id uint32) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(llmBucket)
		if b.Get(boltstore.Key(id)) == nil {
			return ErrNotFound
		}
		return b.Delete(boltstore.Key(id))
	})
}

// ListLlmSettings returns up to limit records after skipping offset, in
// ascending id order, and the number of records.
func (s *Store) ListLlmSettings(_ context.Context, offset, limit int) ([]LlmSettings, int, error) {
	var out []LlmSettings
	var total int
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(llmBucket)
		total = b.Stats().KeyN
		c := b.Cursor()
		i := 0
		for k, v := c.First(); k != nil && len(out) < limit; k, v = c.Next() {
			if i++; i <= offset {
				continue
			}
			attrs, err := decodeLlm(v)
			if err != nil {
				return err
			}
			out = append(out, LlmSettings{ID: binary.BigEndian.Uint32(k), Attrs: attrs})
		}
		return nil
	})
	return out, total, err
}

func decodeLlm(v []byte) (*studiov1.LlmSettingsAttributes, error) {
	if v == nil {
		return nil, ErrNotFound
	}
	attrs := &studiov1.LlmSettingsAttributes{}
	if err := proto.Unmarshal(v, attrs); err != nil {
		return nil, fmt.Errorf("decode llm settings: %w", err)
	}
	return attrs, nil
}

// User is a studio user. KeyHash is the SHA-256 of its API key; the key
// itself is never stored.
type User struct {
	ID      uint32 `json:"id"`
	Email   string `json:"email"`
	Name    string `json:"name"`
	IsAdmin bool   `json:"is_admin"`
	KeyHash []byte `json:"key_hash"`
}

// CreateUser stores u under a new id and indexes its key hash.
func (s *Store) CreateUser(_ context.Context, u User) (User, error) {
	err := s.db.Update(func(tx *bolt.Tx) error { return putNewUser(tx, &u) })
	return u, err
}

func putNewUser(tx *bolt.Tx, u *User) error {
	b := tx.Bucket(userBucket)
	id, err := boltstore.NextID(b)
	if err != nil {
		return err
	}
	u.ID = id
	val, err := json.Marshal(u)
	if err != nil {
		return err
	}
	if err := b.Put(boltstore.Key(id), val); err != nil {
		return err
	}
	return tx.Bucket(keyBucket).Put(u.KeyHash, boltstore.Key(id))
}

// ListUsers returns every user in id order.
func (s *Store) ListUsers(_ context.Context) ([]User, error) {
	var out []User
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(userBucket).ForEach(func(_, v []byte) error {
			var u User
			if err := json.Unmarshal(v, &u); err != nil {
				return fmt.Errorf("decode user: %w", err)
			}
			out = append(out, u)
			return nil
		})
	})
	return out, err
}

// DeleteUser removes a user and its key in one transaction.
func (s *Store) DeleteUser(_ context.Context, id uint32) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(userBucket)
		v := b.Get(boltstore.Key(id))
		if v == nil {
			return ErrNotFound
		}
		var u User
		if err := json.Unmarshal(v, &u); err != nil {
			return fmt.Errorf("decode user: %w", err)
		}
		if err := tx.Bucket(keyBucket).Delete(u.KeyHash); err != nil {
			return err
		}
		return b.Delete(boltstore.Key(id))
	})
}

// UserByKeyHash finds the user whose API key hashes to hash.
func (s *Store) UserByKeyHash(_ context.Context, hash []byte) (User, error) {
	var u User
	err := s.db.View(func(tx *bolt.Tx) error {
		id := tx.Bucket(keyBucket).Get(hash)
		if id == nil {
			return ErrNotFound
		}
		v := tx.Bucket(userBucket).Get(id)
		if v == nil {
			return ErrNotFound
		}
		return json.Unmarshal(v, &u)
	})
	return u, err
}

// HasAdmin reports whether any user is an admin (credential.AdminStore).
func (s *Store) HasAdmin(_ context.Context) (bool, error) {
	found := false
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(userBucket).ForEach(func(_, v []byte) error {
			var u User
			if err := json.Unmarshal(v, &u); err != nil {
				return fmt.Errorf("decode user: %w", err)
			}
			found = found || u.IsAdmin
			return nil
		})
	})
	return found, err
}

// EnsureAdmin creates the bootstrap admin user with this key hash unless a
// user with that key exists (credential.AdminStore).
func (s *Store) EnsureAdmin(_ context.Context, hash []byte) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		if tx.Bucket(keyBucket).Get(hash) != nil {
			return nil
		}
		return putNewUser(tx, &User{Email: "bootstrap-admin@gatehouse.invalid", Name: "Bootstrap admin", IsAdmin: true, KeyHash: hash})
	})
}

// check runs bbolt's consistency check; tests call it.
func (s *Store) check() error {
	return s.db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		for _, name := range allBuckets {
			if tx.Bucket(name) == nil {
				return fmt.Errorf("%w: %s", errNoBucket, name)
			}
		}
		return nil
	})
}
