// Package inflight admits the bytes of requests in flight against one
// budget (CONTRACT §0 "Resource bounds"): the REST facade charges a body's
// length before it reads it, the gRPC server a method's receive limit before
// it reads the message (shrunk to the message's size once read). A request
// that does not fit waits up to Wait, then is refused as busy, so that the
// memory held for requests stays bounded under any mix of clients.
package inflight

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gatehouse/gatehouse/pkg/rest"
)

// DefaultBytes is the default budget (--max-inflight-bytes).
const DefaultBytes = 64 << 20

// Wait is how long a request waits for room before it is refused.
const Wait = 5 * time.Second

// RetryAfter is the Retry-After a refused REST request gets, in seconds.
const RetryAfter = "5"

// ErrBusy refuses a request that found no room within Wait: 503 on REST,
// Unavailable on gRPC.
var ErrBusy = rest.Error(codes.Unavailable, http.StatusServiceUnavailable, "server busy: too many request bytes in flight, retry later")

// Budget is the process's in-flight byte budget.
type Budget struct {
	size int64
	wait time.Duration
	sem  *semaphore.Weighted
}

// New returns a budget of size bytes (DefaultBytes when size ≤ 0) whose
// requests wait up to wait (Wait when wait ≤ 0).
func New(size int64, wait time.Duration) *Budget {
	if size <= 0 {
		size = DefaultBytes
	}
	if wait <= 0 {
		wait = Wait
	}
	return &Budget{size: size, wait: wait, sem: semaphore.NewWeighted(size)}
}

// Size is the budget in bytes.
func (b *Budget) Size() int64 { return b.size }

// Hold is what a request holds of the budget until it calls Release.
type Hold struct {
	b    *Budget
	mu   sync.Mutex
	held int64
}

// Acquire waits until n bytes fit (a request larger than the whole budget
// takes all of it), at most the budget's wait or until ctx ends; then
// ErrBusy (or ctx's error as a status).
func (b *Budget) Acquire(ctx context.Context, n int64) (*Hold, error) {
	n = min(max(n, 0), b.size)
	if n > 0 && !b.sem.TryAcquire(n) {
		wait, cancel := context.WithTimeout(ctx, b.wait)
		err := b.sem.Acquire(wait, n)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil, status.FromContextError(ctx.Err()).Err()
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				return nil, err
			}
			return nil, ErrBusy
		}
	}
	return &Hold{b: b, held: n}, nil
}

// Shrink gives back what the request holds above n bytes (its real size,
// once known).
func (h *Hold) Shrink(n int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if n = max(n, 0); n < h.held {
		h.b.sem.Release(h.held - n)
		h.held = n
	}
}

// Release gives back everything; calling it again does nothing.
func (h *Hold) Release() { h.Shrink(0) }
