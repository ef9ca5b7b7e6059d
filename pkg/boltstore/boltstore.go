// Package boltstore opens a service's bbolt file: parent folder created, a
// bounded wait for the file lock, every bucket created up front and a schema
// version recorded, so that later releases can migrate the layout.
package boltstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// LockTimeout is how long Open waits for another process to release the file.
const LockTimeout = time.Second

var (
	metaBucket    = []byte("meta")
	schemaVersion = []byte("schema_version")
)

// ErrLocked means another process holds the store file.
var ErrLocked = errors.New("store is in use by another process")

// Open opens (or creates) the store at path, creates buckets and checks the
// schema version: a file written by a newer schema is refused. Every write
// transaction is fsynced on commit (bbolt's default, never turned off here).
func Open(path string, version int, buckets ...[]byte) (*bolt.DB, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create the store folder: %w", err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: LockTimeout})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("open %s: %w (waited %s for its lock)", path, ErrLocked, LockTimeout)
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, name := range append([][]byte{metaBucket}, buckets...) {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return fmt.Errorf("create bucket %s: %w", name, err)
			}
		}
		meta := tx.Bucket(metaBucket)
		if v := meta.Get(schemaVersion); v != nil {
			stored, err := strconv.Atoi(string(v))
			if err != nil {
				return fmt.Errorf("unreadable schema version %q", v)
			}
			if stored > version {
				return fmt.Errorf("schema version %d is newer than this binary's %d", stored, version)
			}
		}
		return meta.Put(schemaVersion, []byte(strconv.Itoa(version)))
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("prepare %s: %w", path, err)
	}
	return db, nil
}

// ErrIDsExhausted means a bucket has handed out every uint32 id.
var ErrIDsExhausted = errors.New("no ids left")

// NextID hands out b's next uint32 id (from 1). bbolt keeps the sequence
// with the bucket, so an id is never handed out twice, deleted or not.
func NextID(b *bolt.Bucket) (uint32, error) {
	seq, err := b.NextSequence()
	if err != nil {
		return 0, err
	}
	if seq > math.MaxUint32 {
		return 0, ErrIDsExhausted
	}
	return uint32(seq), nil
}

// Key is the big-endian key of a uint32 id: keys sort as the ids do.
func Key(id uint32) []byte { return binary.BigEndian.AppendUint32(nil, id) }
