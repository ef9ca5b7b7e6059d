// Package logbuf is the process log's writer: a line written after Delay
// without any goes to the underlying writer (stderr) at once, so a quiet
// process's lines — the first line naming its addresses, a failure — are
// never late; the lines that follow it closely are kept in memory and written
// together, at most Delay after the first of them, when Limit bytes are
// waiting, and on Flush and Close — so that a busy server writes its
// per-request lines in one write a few milliseconds apart instead of one
// write each. The price: a process killed without running Close (SIGKILL, a
// crash of the runtime) loses the lines of its last Delay.
package logbuf

import (
	"io"
	"sync"
	"time"
)

const (
	// Delay is the longest a line waits before it is written.
	Delay = 50 * time.Millisecond
	// Limit is how many bytes may wait: a write that reaches it writes
	// them all at once, so memory stays bounded under any rate of lines.
	Limit = 64 << 10
)

// Writer buffers lines for w. It is safe for concurrent use.
type Writer struct {
	w       io.Writer
	mu      sync.Mutex
	buf     []byte
	pending bool      // a timer will flush buf
	closed  bool      // Close ran: every write goes through at once
	last    time.Time // the last write to w
}

// New returns a Writer in front of w.
func New(w io.Writer) *Writer { return &Writer{w: w} }

// Write keeps p for the next flush (copying it, as io.Writer requires). It
// reports the underlying writer's error only when it writes through.
func (b *Writer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return b.w.Write(p)
	}
	if now := time.Now(); !b.pending && now.Sub(b.last) >= Delay {
		b.last = now
		return b.w.Write(p)
	}
	b.buf = append(b.buf, p...)
	if len(b.buf) >= Limit {
		return len(p), b.flushLocked()
	}
	if !b.pending {
		b.pending = true
		time.AfterFunc(Delay, b.timed)
	}
	return len(p), nil
}

func (b *Writer) timed() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pending = false
	b.flushLocked() // nowhere to report the log's own failure
}

// Flush writes what waits now.
func (b *Writer) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.flushLocked()
}

// Close writes what waits; every later write goes straight through.
func (b *Writer) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	return b.flushLocked()
}

func (b *Writer) flushLocked() error {
	if len(b.buf) == 0 {
		return nil
	}
	_, err := b.w.Write(b.buf)
	b.last = time.Now()
	if cap(b.buf) > 2*Limit {
		b.buf = nil
	} else {
		b.buf = b.buf[:0]
	}
	return err
}
