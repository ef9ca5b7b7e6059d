package boltkv

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime/debug"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// ErrDamaged means the store file cannot be served: it is not a bbolt
// file, it is shorter than its own pages say (truncated), or its pages are
// inconsistent (CONTRACT §0, "Store files").
var ErrDamaged = errors.New("store file damaged")

// verify refuses a file that bbolt could not serve without faulting, before
// it is opened for writing: bbolt maps the file and, opening it for writing,
// walks every page to rebuild the free list in a goroutine of its own, where
// a page past the end of a truncated file is a SIGBUS and a broken page a
// panic, both beyond recovery. verify opens the file read-only (a shared
// lock, which waits for a writer as Open does), compares the file's size
// with the high-water mark of its valid meta page, and reads every key and
// value of every bucket in this goroutine, where a fault or bbolt's page
// assertions are recovered as errors. A missing file is fine: Open creates
// it. The cost is one walk of the file's pages at start.
func verify(path string) error {
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	if info.Size() == 0 {
		return fmt.Errorf("store file %s is empty (truncated?): %w; move it away to start a new store", path, ErrDamaged)
	}
	db, err := guard(func() (*bolt.DB, error) {
		return bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: LockTimeout})
	})
	if errors.Is(err, berrors.ErrTimeout) {
		return fmt.Errorf("open %s: %w (waited %s for its lock)", path, ErrLocked, LockTimeout)
	}
	if err != nil {
		return fmt.Errorf("store file %s is not a readable bbolt store (%v): %w", path, err, ErrDamaged)
	}
	defer db.Close()
	return db.View(func(tx *bolt.Tx) error {
		if need := tx.Size(); need > info.Size() {
			return fmt.Errorf("store file %s is truncated: %d bytes, its pages need %d: %w", path, info.Size(), need, ErrDamaged)
		}
		_, err := guard(func() (struct{}, error) {
			return struct{}{}, tx.ForEach(func(_ []byte, b *bolt.Bucket) error { readAll(b); return nil })
		})
		if err != nil {
			return fmt.Errorf("store file %s is corrupt: %w", path, err)
		}
		return nil
	})
}

// readAll reads every key and value of b and of the buckets nested in it,
// touching each page they live on.
func readAll(b *bolt.Bucket) (sum byte) {
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		sum ^= k[len(k)-1]
		if v == nil {
			if nested := b.Bucket(k); nested != nil {
				sum ^= readAll(nested)
			}
			continue
		}
		if len(v) > 0 {
			sum ^= v[0] ^ v[len(v)-1]
		}
	}
	return sum
}

// guard runs fn with memory faults turned into panics (a read past the end
// of a mapped file is a SIGBUS), and a panic into an ErrDamaged error.
func guard[T any](fn func() (T, error)) (v T, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v: %w", r, ErrDamaged)
		}
	}()
	return fn()
}
