package inflight

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestBudget: requests fit until the budget is spent; one more waits for
// room and gets it when a holder shrinks or releases; without room within
// the wait it is ErrBusy; a request larger than the budget takes all of it.
func TestBudget(t *testing.T) {
	b := New(100, 50*time.Millisecond)
	ctx := context.Background()
	h1, err := b.Acquire(ctx, 60)
	if err != nil {
		t.Fatal(err)
	}
	h2, err := b.Acquire(ctx, 40)
	if err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	if _, err := b.Acquire(ctx, 1); !errors.Is(err, ErrBusy) || time.Since(begin) < 50*time.Millisecond {
		t.Fatalf("over the budget: %v after %v, want ErrBusy after the wait", err, time.Since(begin))
	}
	h1.Shrink(10) // 50 given back
	h3, err := b.Acquire(ctx, 50)
	if err != nil {
		t.Fatalf("after a shrink: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		h, err := b.Acquire(ctx, 1000) // larger than the budget: all of it, once free
		if err == nil {
			h.Release()
		}
		done <- err
	}()
	time.Sleep(10 * time.Millisecond)
	h1.Release()
	h2.Release()
	h3.Release()
	h3.Release() // twice: nothing more
	if err := <-done; err != nil {
		t.Fatalf("a request larger than the budget: %v", err)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	full, _ := b.Acquire(ctx, 100)
	if _, err := b.Acquire(canceled, 1); err == nil || errors.Is(err, ErrBusy) {
		t.Errorf("canceled caller: %v, want its context's error", err)
	}
	full.Release()
}
