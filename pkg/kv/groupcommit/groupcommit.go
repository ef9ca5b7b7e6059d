// Package groupcommit is the queue both kv engines commit through: each
// Update queues its function and waits, and one committer goroutine takes
// the calls queued meanwhile as a batch, commits them together (how is the
// engine's business) and answers each caller after the commit that holds
// its writes. A batch whose company is on its way (the callers the last
// commit answered, not all back yet) waits briefly for it (cohort).
package groupcommit

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse/pkg/kv"
)

// ErrClosed answers an Update made after Close.
var ErrClosed = errors.New("kv: engine closed")

// Call is one queued Update. The engine's commit sets Err or Panicked (the
// call's own outcome) and answers it, once; the call is not the engine's
// after that (Update reuses it).
type Call struct {
	Ctx      context.Context
	Fn       func(kv.WriteTx) error
	Err      error
	Panicked any
	done     chan struct{} // Answer's signal, one buffered
	queued   time.Time     // when Update queued it
}

// Answer wakes the caller with err, unless the call has an outcome of its own.
func (c *Call) Answer(err error) {
	if c.Err == nil && c.Panicked == nil {
		c.Err = err
	}
	c.done <- struct{}{}
}

// calls are Calls their Update has returned, for the next ones: a call and
// its channel were two of a write's allocations.
var calls = sync.Pool{New: func() any { return &Call{done: make(chan struct{}, 1)} }}

// Queue holds the calls waiting for the committer.
type Queue struct {
	calls chan *Call
	done  chan struct{} // closed when the committer has exited

	mu     sync.RWMutex // held for reading while a call is queued; Close takes it for writing
	closed bool
}

// Start runs the committer: it calls commit with batches of at most max
// calls until Close, and commit returns the calls it cut from its batch
// (the engine's limits), in order, to lead the next one.
func Start(max int, commit func(batch []*Call) (rest []*Call)) *Queue {
	q := &Queue{calls: make(chan *Call, max), done: make(chan struct{})}
	go q.run(max, commit)
	return q
}

func (q *Queue) run(max int, commit func([]*Call) []*Call) {
	defer close(q.done)
	var pending []*Call
	var last cohort
	for {
		if len(pending) == 0 {
			c, ok := <-q.calls
			if !ok {
				return
			}
			pending = append(pending, c)
		}
		pending = q.fill(pending, max, time.Time{})
		if wait, n := last.wait(pending); wait > 0 {
			pending = q.fill(pending, min(max, n), time.Now().Add(wait))
		}
		began := time.Now()
		rest := commit(pending)
		last = cohort{answered: len(pending) - len(rest), ended: time.Now()}
		last.took = last.ended.Sub(began)
		pending = rest
	}
}

// fill adds queued calls to pending until it holds n, waiting for them
// until deadline (not at all when zero) or until Close.
func (q *Queue) fill(pending []*Call, n int, deadline time.Time) []*Call {
	var timeout <-chan time.Time
	if !deadline.IsZero() {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		timeout = t.C
	}
	for len(pending) < n {
		select {
		case c, ok := <-q.calls:
			if !ok {
				return pending
			}
			pending = append(pending, c)
			continue
		default:
		}
		if timeout == nil {
			return pending
		}
		select {
		case c, ok := <-q.calls:
			if !ok {
				return pending
			}
			pending = append(pending, c)
		case <-timeout:
			return pending
		}
	}
	return pending
}

// cohort is what the committer knows of the callers its last commit
// answered. Under steady concurrent writers, callers fall into two cohorts
// that alternate: while one batch commits, the callers of the previous one
// queue again, and they are all the next batch, while the callers just
// answered come back a moment too late for it — so each fsync carries half
// the writers. So when fewer calls than the last commit answered were
// queued since it ended (its callers are not all back), the next batch
// waits a little for them: at most the last commit's duration
// (maxCohortWait at most), and only until they have come. A lone writer
// never waits: its next call is queued after the commit that answered the
// previous one. Callers that do more work between their writes (a REST
// request's parsing, authentication and answer, on a machine whose cores
// they share) take longer than half a commit to come back: at 32 REST
// clients deleting APIs, a wait of half the commit made batches of 17-19
// calls, a wait of the whole commit 27-28 (less CPU for each write: fewer
// commits, fewer fsyncs).
type cohort struct {
	answered int           // calls the last commit answered
	ended    time.Time     // when it ended
	took     time.Duration // how long it took
}

// maxCohortWait bounds the wait for the last commit's callers.
const maxCohortWait = 4 * time.Millisecond

// wait is how long the batch of pending waits for more calls, and how many
// calls it waits to hold.
func (c cohort) wait(pending []*Call) (time.Duration, int) {
	back := 0
	for _, p := range pending {
		if !p.queued.Before(c.ended) {
			back++
		}
	}
	if back >= c.answered {
		return 0, 0
	}
	return min(c.took, maxCohortWait), len(pending) + c.answered - back
}

// Update queues fn and waits for its answer; a panic of fn is raised again
// here, in its caller.
func (q *Queue) Update(ctx context.Context, fn func(kv.WriteTx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	q.mu.RLock()
	if q.closed {
		q.mu.RUnlock()
		return ErrClosed
	}
	c := calls.Get().(*Call)
	c.Ctx, c.Fn, c.queued = ctx, fn, time.Now()
	q.calls <- c
	q.mu.RUnlock()
	<-c.done
	err, panicked := c.Err, c.Panicked
	*c = Call{done: c.done}
	calls.Put(c)
	if panicked != nil {
		panic(panicked)
	}
	return err
}

// WhileOpen runs fn unless the queue is closed (then ErrClosed); Close
// waits for it to return, so an engine can read until it closes its store.
func (q *Queue) WhileOpen(fn func() error) error {
	q.mu.RLock()
	defer q.mu.RUnlock()
	if q.closed {
		return ErrClosed
	}
	return fn()
}

// Len is how many calls wait for the committer.
func (q *Queue) Len() int { return len(q.calls) }

// Closed reports whether Close was called.
func (q *Queue) Closed() bool {
	q.mu.RLock()
	defer q.mu.RUnlock()
	return q.closed
}

// Close lets the committer commit what is queued and waits until it has
// exited. It reports false when the queue was closed already.
func (q *Queue) Close() bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	q.closed = true
	close(q.calls) // no sender is left: senders hold mu for reading
	q.mu.Unlock()
	<-q.done
	return true
}
