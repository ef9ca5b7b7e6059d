package etcdkv

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/btree"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gatehouse/gatehouse/pkg/kv"
)

// The watch cache keeps the records (P+"k/") in memory, fed by one watch, so
// that a View answers from memory instead of paging through etcd. Reads stay
// linearizable the way Kubernetes serves consistent reads from its watch
// cache: a View first learns etcd's current revision with one cheap quorum
// read, waits until the cache has applied that revision, then reads one
// immutable snapshot of the cache. When the cache cannot catch up in time
// (the watch is re-established, or is far behind), the View reads etcd as
// it did before the cache: a slow read, never a stale one.

// cacheWait bounds how long a View waits for the cache to reach etcd's
// revision before it reads etcd directly.
const cacheWait = time.Second

// progressRetry is how often a waiting View asks for a progress notification
// again, and the least time between two requests.
const progressRetry = 10 * time.Millisecond

// loadPage is how many records one request of the cache's initial load reads.
const loadPage = 512

// cached is one record as the cache holds it: its kv-space key.
type cached struct {
	key    string
	value  []byte
	modRev int64
}

func lessCached(a, b cached) bool { return a.key < b.key }

// snapshot is the cache at one revision: every event up to rev applied and
// none after it. Its tree is never written again, so any number of Views
// read it at once.
type snapshot struct {
	tree *btree.BTreeG[cached]
	rev  int64
}

type watchCache struct {
	e    *Engine
	snap atomic.Pointer[snapshot] // nil until the first load
	// applies counts the snapshots published (tests read it).
	applies atomic.Int64
	// fresh is when (UnixNano) the latest quorum revision read started
	// that a published snapshot is known to have reached: every snapshot
	// from then on holds every write acknowledged before that time
	// (kv.Recent Views read them without a quorum read).
	fresh atomic.Int64
	// revisionReads counts the quorum reads of etcd's revision (tests).
	revisionReads atomic.Int64

	mu      sync.Mutex
	changed chan struct{} // closed and replaced at each publish
	// pending is the revision read the next Views share; reading says
	// whether the reader goroutine runs (revision).
	pending *revisionRead
	reading bool
	// progressAsked is when a progress notification was last requested.
	progressAsked time.Time

	watchCtx context.Context // the watch's stream; RequestProgress names it
	cancel   context.CancelFunc
	done     chan struct{}
}

func startCache(e *Engine) *watchCache {
	ctx, cancel := context.WithCancel(context.Background())
	c := &watchCache{e: e, changed: make(chan struct{}), watchCtx: clientv3.WithRequireLeader(ctx), cancel: cancel, done: make(chan struct{})}
	go c.run()
	return c
}

func (c *watchCache) close() {
	c.cancel()
	<-c.done
}

// run loads the records and follows the watch, loading again after anything
// that breaks the watch (compaction, a lost leader, a closed stream).
func (c *watchCache) run() {
	defer close(c.done)
	backoff := minBackoff
	for c.watchCtx.Err() == nil {
		tree, rev, err := c.load()
		if err == nil {
			backoff = minBackoff
			c.publish(tree, rev)
			c.follow(tree, rev)
			continue
		}
		select {
		case <-c.watchCtx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// load reads every record at one revision (the first page fixes it).
func (c *watchCache) load() (*btree.BTreeG[cached], int64, error) {
	tree := btree.NewG(32, lessCached)
	from, end := c.e.data, prefixEnd(c.e.data)
	var rev int64
	for {
		ctx, cancel := c.e.callCtx(c.watchCtx)
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(loadPage)}
		if rev != 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		resp, err := c.e.cli.Get(ctx, from, opts...)
		cancel()
		if err != nil {
			return nil, 0, err
		}
		if rev == 0 {
			rev = resp.Header.Revision
		}
		for _, item := range resp.Kvs {
			tree.ReplaceOrInsert(cached{key: string(item.Key[len(c.e.data):]), value: item.Value, modRev: item.ModRevision})
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return tree, rev, nil
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// follow applies the watch's events from rev+1 on until the watch breaks.
// An event response moves the cache to its last event's revision (a
// response that catches up may carry a later header revision than the events
// it holds); a progress notification, which etcd sends only once every event
// before it was sent, moves it to the notification's revision.
func (c *watchCache) follow(tree *btree.BTreeG[cached], rev int64) {
	ctx, cancel := context.WithCancel(c.watchCtx)
	defer cancel()
	events := c.e.cli.Watch(ctx, c.e.data, clientv3.WithPrefix(), clientv3.WithRev(rev+1), clientv3.WithProgressNotify())
	for resp := range events {
		if resp.Canceled || resp.Err() != nil || resp.CompactRevision != 0 {
			return
		}
		applied := rev
		if resp.IsProgressNotify() {
			applied = resp.Header.Revision
		}
		for _, ev := range resp.Events {
			key := string(ev.Kv.Key[len(c.e.data):])
			if ev.Type == clientv3.EventTypeDelete {
				tree.Delete(cached{key: key})
			} else {
				tree.ReplaceOrInsert(cached{key: key, value: ev.Kv.Value, modRev: ev.Kv.ModRevision})
			}
			applied = max(applied, ev.Kv.ModRevision)
		}
		if applied > rev {
			rev = applied
			c.publish(tree, rev)
		}
	}
}

// publish makes the tree as it is now the snapshot Views read. The tree is
// cloned (copy on write: the follower's later writes copy the nodes they
// touch), so the published one never changes.
func (c *watchCache) publish(tree *btree.BTreeG[cached], rev int64) {
	c.snap.Store(&snapshot{tree: tree.Clone(), rev: rev})
	c.applies.Add(1)
	c.mu.Lock()
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

// at returns a snapshot that holds every write acknowledged before the call:
// it reads etcd's current revision (a quorum read) and waits until the cache
// applied it. It returns nil, nil when the cache did not get there within
// cacheWait; the caller then reads etcd itself.
func (c *watchCache) at(ctx context.Context) (*snapshot, error) {
	want, started, err := c.revision(ctx)
	if err != nil {
		return nil, err
	}
	var deadline <-chan time.Time
	var retry *time.Ticker
	for {
		c.mu.Lock()
		changed := c.changed
		c.mu.Unlock()
		if s := c.snap.Load(); s != nil && s.rev >= want {
			c.confirm(started)
			return s, nil
		}
		c.askProgress()
		if deadline == nil {
			t := time.NewTimer(cacheWait)
			defer t.Stop()
			deadline = t.C
			retry = time.NewTicker(progressRetry)
			defer retry.Stop()
		}
		select {
		case <-changed:
		case <-retry.C:
			// etcd drops a progress request that finds a watcher of the
			// stream catching up: ask again.
		case <-deadline:
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// confirm records that a snapshot reached the revision of a quorum read
// that started at started.
func (c *watchCache) confirm(started time.Time) {
	at := started.UnixNano()
	for {
		old := c.fresh.Load()
		if old >= at || c.fresh.CompareAndSwap(old, at) {
			return
		}
	}
}

// recent returns the latest snapshot when it holds every write
// acknowledged more than within ago (a View under kv.Recent): a quorum
// read that started less than within ago was reached. Otherwise nil: the
// caller reads as a View does (at), which confirms again.
func (c *watchCache) recent(within time.Duration) *snapshot {
	if time.Since(time.Unix(0, c.fresh.Load())) >= within {
		return nil
	}
	return c.snap.Load()
}

// askProgress asks etcd for a progress notification on the cache's watch,
// at most once per progressRetry however many Views wait: the revision also moves
// with writes outside the records (other services' prefixes, sequences),
// which the watch does not deliver.
func (c *watchCache) askProgress() {
	c.mu.Lock()
	if time.Since(c.progressAsked) < progressRetry {
		c.mu.Unlock()
		return
	}
	c.progressAsked = time.Now()
	c.mu.Unlock()
	ctx, cancel := c.e.callCtx(c.watchCtx)
	defer cancel()
	_ = c.e.cli.RequestProgress(ctx)
}

// snapTx is a View over a snapshot.
type snapTx struct{ s *snapshot }

// Revision is kv.Revisioned: the snapshot holds every event up to its
// revision and nothing after.
func (t snapTx) Revision() (int64, bool) { return t.s.rev, true }

func (t snapTx) Get(key []byte) ([]byte, error) {
	if it, ok := t.s.tree.Get(cached{key: string(key)}); ok {
		return it.value, nil
	}
	return nil, nil
}

func (t snapTx) Scan(prefix, start []byte, fn func(key, value []byte) error) error {
	from, end := bounds(prefix, start)
	err := t.walk(from, end, func(key string, value []byte) error { return fn([]byte(key), value) })
	if errors.Is(err, kv.ErrStop) {
		return nil
	}
	return err
}

func (t snapTx) Count(prefix []byte) (int, error) {
	from, end := bounds(prefix, nil)
	n := 0
	err := t.walk(from, end, func(string, []byte) error { n++; return nil })
	return n, err
}

// walk calls fn for each record in [from, end) of the kv space ("" end:
// unbounded), in key order, until fn returns an error.
func (t snapTx) walk(from, end string, fn func(key string, value []byte) error) error {
	var err error
	t.s.tree.AscendGreaterOrEqual(cached{key: from}, func(it cached) bool {
		if end != "" && it.key >= end {
			return false
		}
		err = fn(it.key, it.value)
		return err == nil
	})
	return err
}

// revisionRead is one quorum read of etcd's revision, shared by the Views
// that asked for it before it started.
type revisionRead struct {
	done    chan struct{}
	started time.Time // when the read left, before etcd answered
	rev     int64
	err     error
}

// revision returns etcd's current revision as of a read that started after
// the call: concurrent Views share one quorum read (a View arriving while a
// read is on its way waits for the next one, which leaves after it), so 32
// clients cost about one request per round trip instead of 32.
func (c *watchCache) revision(ctx context.Context) (int64, time.Time, error) {
	c.mu.Lock()
	if c.pending == nil {
		c.pending = &revisionRead{done: make(chan struct{})}
	}
	r := c.pending
	if !c.reading {
		c.reading = true
		go c.readRevisions()
	}
	c.mu.Unlock()
	select {
	case <-r.done:
		return r.rev, r.started, r.err
	case <-ctx.Done():
		return 0, time.Time{}, ctx.Err()
	}
}

// readRevisions answers the pending revision reads one after another until
// none is waiting.
func (c *watchCache) readRevisions() {
	for {
		c.mu.Lock()
		r := c.pending
		c.pending = nil
		if r == nil {
			c.reading = false
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		bg := context.Background()
		ctx, cancel := c.e.callCtx(bg)
		r.started = time.Now()
		c.revisionReads.Add(1)
		resp, err := c.e.cli.Get(ctx, c.e.data, clientv3.WithCountOnly())
		cancel()
		if err != nil {
			r.err = c.e.mapErr(bg, err)
		} else {
			r.rev = resp.Header.Revision
		}
		close(r.done)
	}
}
