package etcdkv

import (
	"context"
	"errors"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gatehouse/gatehouse/pkg/kv"
	"github.com/gatehouse/gatehouse/pkg/kv/groupcommit"
)

// maxBatch bounds how many update functions share one etcd Txn; the
// operation and byte limits usually cut a batch first.
const maxBatch = 128

// The committer (groupcommit) takes the calls queued meanwhile and commits
// them as batches, one at a time: a batch run while the one before commits
// would read the revision before that commit and fail its compares on every
// key the two share.

// commitBatch runs the first calls of pending as one batch until its Txn
// commits, and answers them; it returns the calls cut from the batch (the
// limits), in order, for the next one. A failed compare (another process
// wrote what the batch read) runs the whole batch again on a fresh revision
// after a jittered backoff, at most maxAttempts times, then its calls get
// kv.ErrConflict. A commit that failed otherwise (etcd unavailable, a commit
// that timed out and may have landed) is not retried: the batch's calls get
// its error.
func (e *Engine) commitBatch(pending []*groupcommit.Call) []*groupcommit.Call {
	backoff := minBackoff
	for attempt := 1; ; attempt++ {
		pending = dropEnded(pending)
		if len(pending) == 0 {
			return nil
		}
		t := &tx{e: e, writable: true}
		if !t.fromCache() && t.down == nil {
			t.prefetch(pending)
		}
		n := len(pending)
		if t.down == nil {
			n = t.run(pending)
		}
		batch, rest := pending[:n], pending[n:]
		var err error
		if t.down != nil {
			// etcd did not answer a read: every function after it would
			// wait as long. The batch's calls and those after get the error.
			answerAll(batch, t.down)
			for _, c := range rest {
				c.Err, c.Panicked = nil, nil // from an earlier attempt
			}
			answerAll(rest, t.down)
			return nil
		}
		if !errors.Is(t.gone(batch), errRevisionGone) {
			var committed bool
			committed, err = t.commit(context.Background())
			if err == nil && committed {
				answerAll(batch, nil)
				return rest
			}
			if err != nil && !errors.Is(err, errRevisionGone) {
				answerAll(batch, err)
				return rest
			}
		}
		if attempt == maxAttempts {
			answerAll(batch, kv.ErrConflict)
			return rest
		}
		e.reruns.Add(1)
		// Full jitter: a sleep in [0, backoff).
		time.Sleep(time.Duration(randInt64(int64(backoff))))
		backoff = min(2*backoff, maxBackoff)
	}
}

// run runs the calls' functions one after another on t and returns how many
// of them belong to the batch. A function that fails or panics has its
// writes undone and keeps its outcome; one whose writes would take the batch
// past etcd's limits is undone and cut, with every call after it, unless
// the batch holds no other function that succeeded: then it is too large
// alone and fails with kv.ErrTooLarge. The run stops after a function whose
// revision was compacted away (the batch runs again) or when etcd did not
// answer a read (t.down).
func (t *tx) run(calls []*groupcommit.Call) int {
	succeeded := false
	for i, c := range calls {
		c.Err, c.Panicked = nil, nil
		if c.Err = c.Ctx.Err(); c.Err != nil {
			continue
		}
		t.begin(c.Ctx)
		c.Panicked, c.Err = runFn(c.Fn, t)
		if c.Err == nil && c.Panicked == nil {
			if c.Err = t.fits(); c.Err == nil {
				t.j = nil // kept
				succeeded = true
				continue
			}
			if succeeded {
				c.Err = nil
				t.undo()
				return i
			}
		}
		t.undo()
		if t.down != nil || errors.Is(c.Err, errRevisionGone) {
			return i + 1
		}
	}
	return len(calls)
}

// fromCache fixes the batch's revision at the watch cache's snapshot, which
// holds every write acknowledged before the batch (cache.go), so that the
// batch reads its records from memory (and only sequences and guards from
// etcd, at that revision). The compares are the same: the snapshot carries
// each record's ModRevision. It reports false when there is no cache or it
// did not catch up in time; the batch then reads etcd (or, when etcd did not
// answer, fails at once with t.down).
func (t *tx) fromCache() bool {
	if t.e.cache == nil {
		return false
	}
	s, err := t.e.cache.at(context.Background())
	if errors.Is(err, kv.ErrUnavailable) {
		t.down = err // the batch's calls get it at once
	}
	if err != nil || s == nil {
		return false
	}
	t.snap, t.rev = s, s.rev
	return true
}

// prefetch runs the calls' functions once before the batch runs them one
// after another: concurrently, at the batch's revision, for their reads
// only (their writes and outcomes are dropped; update functions may run
// twice). The serial run then finds in the cache what those reads fetched,
// instead of waiting for each function's reads in turn. Reads that depend
// on an earlier function's writes are still made by the serial run.
func (t *tx) prefetch(calls []*groupcommit.Call) {
	if len(calls) < 2 {
		return
	}
	if t.rev == 0 {
		// One linearizable read fixes the batch's revision.
		ctx, cancel := t.e.callCtx(context.Background())
		resp, err := t.e.cli.Get(ctx, t.e.data, clientv3.WithCountOnly())
		cancel()
		if err != nil {
			return // the serial run meets (and reports) the failure itself
		}
		t.rev = resp.Header.Revision
	}
	shared := &sharedReads{m: make(map[string]cachedRead), inflight: make(map[string]chan struct{})}
	var wg sync.WaitGroup
	for _, c := range calls {
		if c.Ctx.Err() != nil {
			continue
		}
		wg.Go(func() {
			s := &tx{e: t.e, ctx: c.Ctx, writable: true, rev: t.rev, shared: shared}
			runFn(c.Fn, s)
		})
	}
	wg.Wait()
	t.cache = shared.m
}

// gone returns errRevisionGone when a function of the batch met a compacted
// revision.
func (t *tx) gone(batch []*groupcommit.Call) error {
	for _, c := range batch {
		if errors.Is(c.Err, errRevisionGone) {
			return errRevisionGone
		}
	}
	return nil
}

// runFn calls fn, turning a panic into a value for its caller to re-raise.
func runFn(fn func(kv.WriteTx) error, t *tx) (panicked any, err error) {
	defer func() {
		if p := recover(); p != nil {
			panicked = p
		}
	}()
	return nil, fn(t)
}

// dropEnded answers the calls whose context ended and returns the others.
func dropEnded(calls []*groupcommit.Call) []*groupcommit.Call {
	kept := calls[:0]
	for _, c := range calls {
		if err := c.Ctx.Err(); err != nil {
			c.Err = err
			c.Answer(nil)
			continue
		}
		kept = append(kept, c)
	}
	return kept
}

func answerAll(calls []*groupcommit.Call, err error) {
	for _, c := range calls {
		c.Answer(err)
	}
}
