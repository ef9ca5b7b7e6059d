// Package groupcommit is the queue both kv engines commit through: each
// Update queues its function and waits, and one committer goroutine takes
// the calls queued meanwhile as a batch, commits them together (how is the
// engine's business) and answers each caller after the commit that holds
// its writes.
package groupcommit

import (
	"context"
	"errors"
	"sync"

	"github.com/gatehouse/gatehouse/pkg/kv"
)

// ErrClosed answers an Update made after Close.
var ErrClosed = errors.New("kv: engine closed")

// Call is one queued Update. The engine's commit sets Err or Panicked (the
// call's own outcome) and answers it.
type Call struct {
	Ctx      context.Context
	Fn       func(kv.WriteTx) error
	Err      error
	Panicked any
	done     chan struct{}
}

// Answer wakes the caller with err, unless the call has an outcome of its own.
func (c *Call) Answer(err error) {
	if c.Err == nil && c.Panicked == nil {
		c.Err = err
	}
	close(c.done)
}

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
	for {
		if len(pending) == 0 {
			c, ok := <-q.calls
			if !ok {
				return
			}
			pending = append(pending, c)
		}
	fill:
		for len(pending) < max {
			select {
			case c, ok := <-q.calls:
				if !ok {
					break fill
				}
				pending = append(pending, c)
			default:
				break fill
			}
		}
		pending = commit(pending)
	}
}

// Update queues fn and waits for its answer; a panic of fn is raised again
// here, in its caller.
func (q *Queue) Update(ctx context.Context, fn func(kv.WriteTx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c := &Call{Ctx: ctx, Fn: fn, done: make(chan struct{})}
	q.mu.RLock()
	if q.closed {
		q.mu.RUnlock()
		return ErrClosed
	}
	q.calls <- c
	q.mu.RUnlock()
	<-c.done
	if c.Panicked != nil {
		panic(c.Panicked)
	}
	return c.Err
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
