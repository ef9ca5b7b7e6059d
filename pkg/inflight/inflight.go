// Package inflight admits the bytes of requests in flight against one
// budget (CONTRACT §0 "Resource bounds"), shared by the REST facade and the
// gRPC server. A request holds what it has received, not what it declared:
// the REST facade grows a body's hold as its bytes arrive (Hold.Grow), the
// gRPC server a message's as its frames arrive (Hold.TryGrow), then the
// message's size; and both end a request whose bytes stop arriving
// (Progress). Every hold belongs to a caller (the request's key) and
// one caller holds at most a quarter of the budget (Share), so a key that
// opens slow uploads or streams leaves the rest to everyone else. A request
// that finds no room waits up to Wait, then is refused as busy, so that the
// memory held for requests stays bounded under any mix of clients. (A
// single request larger than the share may hold more while its key holds
// little else: bodies up to 16 MiB are taken under a 16 MiB budget.)
package inflight

import (
	"context"
	"crypto/sha256"
	"net/http"
	"strings"
	"sync"
	"time"

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

// A request's bytes must keep arriving, on REST and gRPC alike: the first
// MinProgress bytes (or all of a smaller request) within FirstProgress of
// its start, then each further MinProgress within ProgressWindow of the
// last (Progress); else the request ends (REST 408, gRPC
// DeadlineExceeded). Its hold grows in steps of GrowStep as they come.
const (
	MinProgress    = 64 << 10
	ProgressWindow = 10 * time.Second
	FirstProgress  = time.Second + ProgressWindow
	GrowStep       = 64 << 10
)

// Progress follows the bytes of one request against the minimum rate.
type Progress struct {
	mark    int64     // bytes received at the last progress
	at      time.Time // when: the request's start, then each MinProgress more
	started bool      // a first MinProgress has arrived
}

// NewProgress starts following a request that started at start.
func NewProgress(start time.Time) Progress { return Progress{at: start} }

// Arrived records that the request has received total bytes so far, and
// reports whether that is progress (MinProgress more since the last), which
// moves the Deadline on.
func (p *Progress) Arrived(total int64) bool {
	if total-p.mark < MinProgress {
		return false
	}
	p.mark, p.at, p.started = total, time.Now(), true
	return true
}

// Deadline is when the next MinProgress bytes must have arrived.
func (p *Progress) Deadline() time.Time {
	if !p.started {
		return p.at.Add(FirstProgress)
	}
	return p.at.Add(ProgressWindow)
}

// ErrBusy refuses a request that found no room within Wait: 503 on REST,
// Unavailable on gRPC.
var ErrBusy = rest.Error(codes.Unavailable, http.StatusServiceUnavailable, "server busy: too many request bytes in flight, retry later")

// Budget is the process's in-flight byte budget.
type Budget struct {
	size  int64
	share int64 // what one caller may hold: a quarter of size
	wait  time.Duration

	mu      sync.Mutex
	used    int64
	held    map[string]int64 // by caller
	freed   chan struct{}    // closed (and replaced) when the holds change
	seq     uint64           // of the last hold acquired
	waiting map[*Hold]struct{}
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
	return &Budget{size: size, share: max(size/4, 1), wait: wait, held: map[string]int64{}, freed: make(chan struct{}),
		waiting: map[*Hold]struct{}{}}
}

// Size is the budget in bytes.
func (b *Budget) Size() int64 { return b.size }

// Share is what one caller may hold at once: a quarter of the budget.
func (b *Budget) Share() int64 { return b.share }

// Caller names the caller of a request by its credential (an
// Authorization header or gRPC metadata value, with or without "Bearer "):
// a digest, so the budget keeps no secret. REST and gRPC calls with one key
// share one Share.
func Caller(authorization string) string {
	key := strings.TrimSpace(authorization)
	if len(key) > 7 && strings.EqualFold(key[:7], "bearer ") {
		key = strings.TrimSpace(key[7:])
	}
	sum := sha256.Sum256([]byte(key))
	return string(sum[:16])
}

// Held is what the budget holds in all, and for caller.
func (b *Budget) Held(caller string) (all, ofCaller int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used, b.held[caller]
}

// Hold is what a request holds of the budget until it calls Release.
type Hold struct {
	b      *Budget
	caller string
	seq    uint64 // the younger, the larger
	mu     sync.Mutex
	held   int64
}

// Acquire waits until n bytes fit for caller, at most the budget's wait or
// until ctx ends; then ErrBusy (or ctx's error as a status). A request
// larger than the budget holds all of it; one larger than its caller's
// share grows past it only while its caller holds little else (fits: a
// large body is not refused, and a caller's many requests still share a
// quarter).
func (b *Budget) Acquire(ctx context.Context, caller string, n int64) (*Hold, error) {
	b.mu.Lock()
	b.seq++
	h := &Hold{b: b, caller: caller, seq: b.seq}
	b.mu.Unlock()
	if err := h.Grow(ctx, n); err != nil {
		return nil, err
	}
	return h, nil
}

// Grow adds n bytes to the hold (more of the request has arrived), waiting
// for room as Acquire does; a refused Grow leaves the hold as it was. A
// hold stops growing at the whole budget.
func (h *Hold) Grow(ctx context.Context, n int64) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	n = min(max(n, 0), h.b.size-h.held)
	if n <= 0 {
		return nil
	}
	if err := h.b.take(ctx, h, n); err != nil {
		return err
	}
	h.held += n
	return nil
}

// TryGrow adds n bytes to the hold if they fit now, in the budget and in
// its caller's share, and otherwise refuses at once (ErrBusy), leaving the
// hold as it was. The gRPC server grows a call's hold so, in its
// connection's reader, which must not wait: once a call is admitted its
// sender may send the whole message (grpc-go grants the flow-control window
// for the length the message declares), so bytes that do not fit end the
// call instead of being held back.
func (h *Hold) TryGrow(n int64) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	n = min(max(n, 0), h.b.size-h.held)
	if n <= 0 {
		return nil
	}
	b := h.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if global, share := b.fits(h, n); !global || !share {
		return ErrBusy
	}
	b.used += n
	b.held[h.caller] += n
	h.held += n
	return nil
}

// Shrink gives back what the request holds above n bytes (its real size,
// once known).
func (h *Hold) Shrink(n int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if n = max(n, 0); n < h.held {
		h.b.give(h.caller, h.held-n)
		h.held = n
	}
}

// Release gives back everything; calling it again does nothing.
func (h *Hold) Release() { h.Shrink(0) }

// take waits until n more bytes fit in the budget and in h's caller's
// share. Holds grow while their requests arrive, so they could all wait for
// each other: when every byte in the way is held by waiting holds, the
// youngest of them is refused at once (ErrBusy), and what it gives back
// lets the older ones go on.
func (b *Budget) take(ctx context.Context, h *Hold, n int64) error {
	var timer *time.Timer
	b.mu.Lock()
	defer b.mu.Unlock()
	defer delete(b.waiting, h)
	for {
		global, share := b.fits(h, n)
		if global && share {
			b.used += n
			b.held[h.caller] += n
			return nil
		}
		if _, ok := b.waiting[h]; !ok {
			b.waiting[h] = struct{}{}
			b.wake() // the others see one more waiter
		}
		if b.youngestStuck(h.caller, !share) == h {
			b.wake()
			return ErrBusy
		}
		if timer == nil {
			timer = time.NewTimer(b.wait)
			defer timer.Stop()
		}
		freed := b.freed
		b.mu.Unlock()
		var err error
		select {
		case <-freed:
		case <-timer.C:
			err = ErrBusy
		case <-ctx.Done():
			err = status.FromContextError(ctx.Err()).Err()
		}
		b.mu.Lock()
		if err != nil {
			b.wake()
			return err
		}
	}
}

// fits tells whether n more bytes for h fit in the budget (global) and in
// its caller's share (share): a hold larger than the share grows past it
// only while its caller's other holds are at most a 64th of the share (the
// small calls a client makes beside a large upload; nothing else of it).
// b.mu is held.
func (b *Budget) fits(h *Hold, n int64) (global, share bool) {
	return b.used+n <= b.size, b.held[h.caller]+n <= b.share || b.held[h.caller]-h.held <= b.share/64
}

// youngestStuck returns the youngest waiting hold when the waiting holds
// hold every byte of the budget (of caller's share, when byShare is set),
// so none can go on without one giving way; nil otherwise.
func (b *Budget) youngestStuck(caller string, byShare bool) *Hold {
	var waitingHeld int64
	var youngest *Hold
	for w := range b.waiting {
		if byShare && w.caller != caller {
			continue
		}
		waitingHeld += w.held
		if youngest == nil || w.seq > youngest.seq {
			youngest = w
		}
	}
	if byShare && waitingHeld < b.held[caller] || !byShare && waitingHeld < b.used {
		return nil
	}
	return youngest
}

// wake lets the waiters look again. b.mu is held.
func (b *Budget) wake() {
	close(b.freed)
	b.freed = make(chan struct{})
}

// give returns n bytes of caller's and wakes the waiters.
func (b *Budget) give(caller string, n int64) {
	b.mu.Lock()
	b.used -= n
	if b.held[caller] -= n; b.held[caller] <= 0 {
		delete(b.held, caller)
	}
	b.wake()
	b.mu.Unlock()
}
