// Package boltkv is the kv engine on one embedded bbolt file: the default
// store of every service (CONTRACT §0), one process per file.
//
// Layout of the file: bucket "kv" holds the key space, bucket "seq" the
// sequences (name → big-endian uint64), invisible to Get, Scan and Count.
//
// Group commit: every Update is queued to one committer goroutine, which runs
// all the functions queued meanwhile inside one bbolt transaction and commits
// them with one fsync; each caller returns only after that commit. Each
// function runs exactly once: its writes are journaled (the prior value of
// every key it touches), so a function that fails or panics is undone on its
// own while the others' writes stay in the batch. A lone writer commits at
// once, without waiting for company.
package boltkv

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/gatehouse/gatehouse/pkg/kv"
	"github.com/gatehouse/gatehouse/pkg/kv/groupcommit"
)

// LockTimeout is how long Open waits for another process to release the file.
const LockTimeout = time.Second

// LegacyPrefix is where Open moves the records of a file written before the
// kv seam, when each record kind had its own bucket: the pairs of bucket b go
// under "legacy/b/" and its sequence becomes the sequence named b. A domain
// store converts them to its own layout in its schema transaction
// (kv.EnsureSchema) and deletes them.
const LegacyPrefix = "legacy/"

// maxBatch bounds how many update functions share one transaction.
const maxBatch = 512

// ErrLocked means another process holds the store file.
var ErrLocked = errors.New("store is in use by another process")

var (
	errTxDone  = errors.New("kv: transaction used after its function returned")
	errNoKey   = errors.New("kv: empty key")
	dataBucket = []byte("kv")
	seqBucket  = []byte("seq")
)

// Engine is a kv.Engine on a bbolt file.
type Engine struct {
	db    *bolt.DB
	path  string
	queue *groupcommit.Queue
	rev   atomic.Int64 // the id of the last transaction committed (Committed)

	// journal and keys are the committer's, kept from one commit's writeTx
	// for the next: the journal's entries and its copies of their keys.
	journal []prior
	keys    []byte
}

var _ kv.Engine = (*Engine)(nil)

// Open opens (or creates) the file at path, creating its parent folder. A
// file another process holds is refused after LockTimeout with ErrLocked; a
// file of the earlier bucket-per-kind layout is converted (see LegacyPrefix)
// in one transaction. Every commit is fsynced (bbolt's default, never turned
// off here). A file that is truncated, corrupt or no bbolt file at all is
// refused with ErrDamaged before it is opened for writing (verify).
func Open(path string) (*Engine, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create the store folder: %w", err)
	}
	if err := verify(path); err != nil {
		return nil, err
	}
	// verify read every page; what bbolt's own walk of them at open still
	// finds wrong (it panics) is recovered as ErrDamaged.
	db, err := guard(func() (*bolt.DB, error) { return openFile(path) })
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("open %s: %w (waited %s for its lock)", path, ErrLocked, LockTimeout)
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := db.Update(prepare); err != nil {
		db.Close()
		return nil, fmt.Errorf("prepare %s: %w", path, err)
	}
	e := &Engine{db: db, path: path}
	if err := db.View(func(tx *bolt.Tx) error { e.rev.Store(int64(tx.ID())); return nil }); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	e.queue = groupcommit.Start(maxBatch, e.commit)
	return e, nil
}

// openFile opens the bbolt file for writing, with the engine's options.
func openFile(path string) (*bolt.DB, error) {
	return bolt.Open(path, 0o600, &bolt.Options{
		Timeout: LockTimeout,
		// A large map (address space only; the file grows as needed) so
		// that a commit rarely has to remap, which waits for open reads.
		InitialMmapSize: 1 << 30,
		FreelistType:    bolt.FreelistMapType,
		// The free-page list is not written at each commit (as etcd does):
		// a commit writes fewer pages, so a durable write waits about a
		// third less (BenchmarkUpdate: 4.2 → 2.8 ms alone). Open rebuilds
		// the list by walking the file instead (about 130 ms for 100 MiB).
		NoFreelistSync: true,
	})
}

// prepare creates the two buckets and moves every other top-level bucket
// (the earlier layout) into the key space under LegacyPrefix.
func prepare(tx *bolt.Tx) error {
	data, err := tx.CreateBucketIfNotExists(dataBucket)
	if err != nil {
		return err
	}
	seq, err := tx.CreateBucketIfNotExists(seqBucket)
	if err != nil {
		return err
	}
	var legacy [][]byte
	err = tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
		if !bytes.Equal(name, dataBucket) && !bytes.Equal(name, seqBucket) {
			legacy = append(legacy, bytes.Clone(name))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, name := range legacy {
		b := tx.Bucket(name)
		prefix := append([]byte(LegacyPrefix), append(name, '/')...)
		err := b.ForEach(func(k, v []byte) error {
			if v == nil {
				return fmt.Errorf("legacy bucket %s holds a nested bucket %q", name, k)
			}
			return data.Put(append(bytes.Clone(prefix), k...), bytes.Clone(v))
		})
		if err != nil {
			return err
		}
		if n := b.Sequence(); n > 0 {
			if err := seq.Put(name, binary.BigEndian.AppendUint64(nil, n)); err != nil {
				return err
			}
		}
		if err := tx.DeleteBucket(name); err != nil {
			return err
		}
	}
	return nil
}

// Path is the file the engine keeps.
func (e *Engine) Path() string { return e.path }

// View runs fn in a bbolt read transaction: one snapshot that includes every
// Update that has returned.
func (e *Engine) View(ctx context.Context, fn func(kv.ReadTx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return e.queue.WhileOpen(func() error {
		return e.db.View(func(tx *bolt.Tx) error {
			r := &readTx{data: tx.Bucket(dataBucket), rev: int64(tx.ID())}
			defer func() { r.done = true }()
			return fn(r)
		})
	})
}

// Committed is kv.Committed: the id of the last write transaction
// committed, which a View opened now reads (readTx.Revision). The committer
// is the file's only writer and stores it before it answers the
// transaction's callers. ok is false once the engine is closed.
func (e *Engine) Committed() (int64, bool) {
	return e.rev.Load(), !e.queue.Closed()
}

// Update queues fn for the committer and waits until the transaction that
// ran it is on disk. fn runs exactly once, unless ctx ends before its turn.
func (e *Engine) Update(ctx context.Context, fn func(kv.WriteTx) error) error {
	return e.queue.Update(ctx, fn)
}

// Ready reports whether the file is open.
// Snapshot is kv.Snapshotter: the file as one read transaction sees it
// (bbolt's Tx.WriteTo), while writers go on committing. The copy is a store
// file like the original, its free pages included.
func (e *Engine) Snapshot(ctx context.Context, fn func(size int64, content io.WriterTo) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return e.db.View(func(tx *bolt.Tx) error { return fn(tx.Size(), tx) })
}

func (e *Engine) Ready(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if e.queue.Closed() {
		return fmt.Errorf("%w: %w", kv.ErrUnavailable, groupcommit.ErrClosed)
	}
	return nil
}

// Close commits what is queued, stops the committer and closes the file.
func (e *Engine) Close() error {
	if !e.queue.Close() {
		return nil
	}
	return e.db.Close()
}

// commit runs batch in one bbolt transaction. A call whose function fails,
// panics, or whose context ended has its writes undone and keeps its own
// outcome; the others share the commit's.
func (e *Engine) commit(batch []*groupcommit.Call) []*groupcommit.Call {
	var id int64
	err := e.db.Update(func(tx *bolt.Tx) error {
		id = int64(tx.ID())
		w := &writeTx{readTx: readTx{data: tx.Bucket(dataBucket)}, seq: tx.Bucket(seqBucket), journal: e.journal, keys: e.keys}
		w.readTx.writes = &w.nwrites
		defer e.keep(w)
		for _, c := range batch {
			if c.Err = c.Ctx.Err(); c.Err != nil {
				continue
			}
			c.Panicked, c.Err = w.run(c.Fn)
			if c.Err != nil || c.Panicked != nil {
				if err := w.undo(); err != nil {
					return fmt.Errorf("undo a failed update: %w", err)
				}
			}
			w.journal, w.keys = w.journal[:0], w.keys[:0]
		}
		return nil
	})
	// Before any caller is answered, so that its next read is not answered
	// from memory older than its write. After a failed commit too: the
	// next View reads this id or the one before, and whatever a memo holds
	// is of the one before.
	e.rev.Store(id)
	for _, c := range batch {
		c.Answer(err)
	}
	return nil
}

// keep keeps w's journal and key copies for the next commit, unless a
// large write (a migration's) grew them past keptJournal.
func (e *Engine) keep(w *writeTx) {
	e.journal, e.keys = nil, nil
	if cap(w.journal) <= keptJournal && cap(w.keys) <= keptJournal*64 {
		clear(w.journal[:cap(w.journal)]) // the values it held go
		e.journal, e.keys = w.journal[:0], w.keys[:0]
	}
}

// keptJournal bounds the journal entries the committer keeps between
// commits (and 64 bytes of key each).
const keptJournal = 1024

// readTx reads the key space of one bbolt transaction.
type readTx struct {
	data   *bolt.Bucket
	cur    *bolt.Cursor // lookup's, made at the first
	spare  *bolt.Cursor // a Scan's or Count's, kept for the next one
	writes *int         // the write transaction's write count; nil in View
	done   bool
	rev    int64 // in View, the id of the last transaction committed before it
}

// Revision is kv.Revisioned: bbolt numbers every committed write
// transaction, and a read transaction sees the last one's state. A
// read-write transaction does not know its own.
func (r *readTx) Revision() (int64, bool) {
	return r.rev, r.writes == nil && !r.done
}

func (r *readTx) Get(key []byte) ([]byte, error) {
	if r.done {
		return nil, errTxDone
	}
	if v, ok := r.lookup(key); ok {
		return v, nil
	}
	return nil, nil
}

// cursor is a cursor for a Scan or Count: the one the last of them kept,
// or a new one when that is in use (a Scan inside a Scan's function).
func (r *readTx) cursor() *bolt.Cursor {
	if c := r.spare; c != nil {
		r.spare = nil
		return c
	}
	return r.data.Cursor()
}

// keep keeps c, which its Scan or Count is done with, for the next one
// (each starts with a seek).
func (r *readTx) keep(c *bolt.Cursor) { r.spare = c }

// lookup reads key's value and whether it is present (a key put with an
// empty value may read as nil) through one cursor the transaction keeps,
// left on the key: bbolt's Get makes a cursor, and so allocations, for
// every read. Each lookup starts with a seek from the root, which sees the
// transaction's writes.
func (r *readTx) lookup(key []byte) ([]byte, bool) {
	if r.cur == nil {
		r.cur = r.data.Cursor()
	}
	k, v := r.cur.Seek(key)
	return v, bytes.Equal(k, key)
}

func (r *readTx) Scan(prefix, start []byte, fn func(key, value []byte) error) error {
	if r.done {
		return errTxDone
	}
	seek := prefix
	if bytes.Compare(start, prefix) > 0 {
		seek = start
	}
	c := r.cursor()
	defer r.keep(c)
	for k, v := c.Seek(seek); k != nil && bytes.HasPrefix(k, prefix); {
		before := r.writeCount()
		if err := fn(k, v); err != nil {
			if errors.Is(err, kv.ErrStop) {
				return nil
			}
			return err
		}
		if r.writeCount() == before {
			k, v = c.Next()
			continue
		}
		// fn wrote: bbolt cursors do not survive writes, so find our place again.
		last := bytes.Clone(k)
		if k, v = c.Seek(last); k != nil && bytes.Equal(k, last) {
			k, v = c.Next()
		}
	}
	return nil
}

func (r *readTx) writeCount() int {
	if r.writes == nil {
		return 0
	}
	return *r.writes
}

func (r *readTx) Count(prefix []byte) (int, error) {
	if r.done {
		return 0, errTxDone
	}
	n := 0
	c := r.cursor()
	defer r.keep(c)
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		n++
	}
	return n, nil
}

// writeTx is one update function's view of the shared transaction, with
// the journal that undoes its writes if it fails.
type writeTx struct {
	readTx
	seq     *bolt.Bucket
	journal []prior // every write of the current function, in order, with the value it replaced
	keys    []byte  // the journal's copies of its keys, one after another
	nwrites int
}

type prior struct {
	bucket  *bolt.Bucket
	key     []byte
	value   []byte
	present bool // false: the key was absent
}

// run calls fn, turning a panic into a value for the caller to re-raise.
func (w *writeTx) run(fn func(kv.WriteTx) error) (panicked any, err error) {
	w.done = false
	defer func() {
		w.done = true
		if p := recover(); p != nil {
			panicked = p
		}
	}()
	return nil, fn(w)
}

// remember journals that key held value in b before a write, or was
// absent. The journal keeps a copy of key in keys, which the committer
// keeps for its next commits (no allocation a write, once it has grown).
// The journal keeps value itself, not a
// copy: it is the file's mapped page or a value put earlier in this
// transaction, and neither changes before the function's undo (bbolt
// writes no page of the file it maps until the commit, and copies what its
// nodes hold off the map before it remaps, as undo's Put of value would
// need); a direct migration of 10,000 APIs copied 35 MB of replaced
// records here.
func (w *writeTx) remember(b *bolt.Bucket, key, value []byte, present bool) {
	w.keys = append(w.keys, key...)
	p := prior{bucket: b, key: w.keys[len(w.keys)-len(key) : len(w.keys) : len(w.keys)], present: present}
	if present {
		p.value = value
		if p.value == nil {
			p.value = []byte{} // bbolt takes nil as empty
		}
	}
	w.journal = append(w.journal, p)
}

// undo restores every key the current function changed, latest write
// first, so that each key ends with the value it had before the function.
func (w *writeTx) undo() error {
	for i := len(w.journal) - 1; i >= 0; i-- {
		p := w.journal[i]
		var err error
		if !p.present {
			err = p.bucket.Delete(p.key)
		} else {
			err = p.bucket.Put(p.key, p.value)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (w *writeTx) Put(key, value []byte) error {
	if w.done {
		return errTxDone
	}
	if len(key) == 0 {
		return errNoKey
	}
	if len(key) > bolt.MaxKeySize || len(value) > bolt.MaxValueSize {
		return fmt.Errorf("%w: bbolt takes keys up to %d bytes and values up to %d bytes", kv.ErrTooLarge, bolt.MaxKeySize, bolt.MaxValueSize)
	}
	v, present := w.lookup(key)
	w.remember(w.data, key, v, present)
	w.nwrites++
	return w.data.Put(key, value) // which keeps a copy of key
}

func (w *writeTx) Delete(key []byte) error {
	if w.done {
		return errTxDone
	}
	if len(key) == 0 {
		return nil
	}
	// One seek finds the key, its value for the journal, and deletes it.
	v, ok := w.lookup(key)
	if !ok {
		return nil
	}
	w.remember(w.data, key, v, true)
	w.nwrites++
	return w.cur.Delete()
}

func (w *writeTx) NextSeq(name string) (uint64, error) {
	if w.done {
		return 0, errTxDone
	}
	if name == "" {
		return 0, errNoKey
	}
	key := []byte(name)
	var n uint64
	v := w.seq.Get(key)
	if len(v) == 8 {
		n = binary.BigEndian.Uint64(v)
	}
	if n == math.MaxUint64 {
		return 0, kv.ErrSeqExhausted
	}
	w.remember(w.seq, key, v, v != nil)
	n++
	return n, w.seq.Put(key, binary.BigEndian.AppendUint64(nil, n))
}

// Check runs bbolt's consistency check of the whole file; store tests call
// it before closing.
func (e *Engine) Check() error {
	return e.db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		if tx.Bucket(dataBucket) == nil || tx.Bucket(seqBucket) == nil {
			return errors.New("boltkv: a bucket is missing")
		}
		return nil
	})
}
