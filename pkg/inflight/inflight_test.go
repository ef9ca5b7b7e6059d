package inflight

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestBudget: requests fit until the budget is spent; one more waits for
// room and gets it when a holder shrinks or releases; without room within
// the wait it is ErrBusy; a request larger than the budget holds all of it.
func TestBudget(t *testing.T) {
	// The wait is long enough for the releases below to reach the waiting
	// request within it on a loaded machine (at 50 ms, with the tests of
	// every package running on two busy cores, they did not).
	const wait = time.Second
	b := New(400, wait)
	ctx := context.Background()
	var holds []*Hold
	for _, c := range []string{"a", "b", "c", "d"} {
		h, err := b.Acquire(ctx, c, 100)
		if err != nil {
			t.Fatal(err)
		}
		holds = append(holds, h)
	}
	begin := time.Now()
	if _, err := b.Acquire(ctx, "e", 1); !errors.Is(err, ErrBusy) || time.Since(begin) < wait {
		t.Fatalf("over the budget: %v after %v, want ErrBusy after the wait", err, time.Since(begin))
	}
	holds[0].Shrink(50) // 50 given back
	h, err := b.Acquire(ctx, "e", 50)
	if err != nil {
		t.Fatalf("after a shrink: %v", err)
	}
	holds = append(holds, h)
	done := make(chan error, 1)
	go func() {
		h, err := b.Acquire(ctx, "f", 1000) // larger than the budget: all of it, once free
		if err == nil {
			if all, of := b.Held("f"); of != 400 || all != 400 {
				err = errors.New("a request larger than the budget does not hold all of it")
			}
			h.Release()
		}
		done <- err
	}()
	time.Sleep(10 * time.Millisecond)
	for _, h := range holds {
		h.Release()
		h.Release() // twice: nothing more
	}
	if err := <-done; err != nil {
		t.Fatalf("a request larger than the budget: %v", err)
	}
	if all, _ := b.Held(""); all != 0 {
		t.Fatalf("%d bytes held after every release", all)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	full, _ := b.Acquire(ctx, "a", 400)
	if _, err := b.Acquire(canceled, "a", 1); err == nil || errors.Is(err, ErrBusy) {
		t.Errorf("canceled caller: %v, want its context's error", err)
	}
	full.Release()
}

// TestShare: one caller's requests hold at most a quarter of the budget
// together, however many it opens (one request alone may hold more); the
// others are served at once meanwhile; a hold grows as its request's bytes
// arrive.
func TestShare(t *testing.T) {
	b := New(400, 50*time.Millisecond)
	ctx := context.Background()
	first, err := b.Acquire(ctx, "greedy", 0)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := first.Grow(ctx, 30); err != nil {
			t.Fatal(err)
		}
	}
	second, err := b.Acquire(ctx, "greedy", 10)
	if err != nil {
		t.Fatalf("a second request within the share: %v", err)
	}
	if err := second.Grow(ctx, 1); !errors.Is(err, ErrBusy) {
		t.Fatalf("a second request of a caller at its share: %v, want ErrBusy", err)
	}
	second.Release()
	if err := first.Grow(ctx, 100); err != nil {
		t.Fatalf("a caller's only request past the share: %v", err)
	}
	begin := time.Now()
	other, err := b.Acquire(ctx, "other", 100)
	if err != nil || time.Since(begin) > 10*time.Millisecond {
		t.Fatalf("another caller: %v after %v, want room at once", err, time.Since(begin))
	}
	other.Release()
	first.Release()
	if Caller("Bearer k") != Caller("k") || Caller("k") == Caller("l") {
		t.Error("Caller: one key, with or without Bearer, is one caller; two keys are two")
	}
}

// TestStuckHoldsGiveWay: holds that grow could wait for each other for
// ever; when every byte in the way is held by waiting holds the youngest is
// refused at once and the older ones go on — within a caller's share and
// across callers.
func TestStuckHoldsGiveWay(t *testing.T) {
	for _, callers := range [][2]string{{"k", "k"}, {"k", "l"}} {
		b := New(400, 10*time.Second)
		if callers[0] != callers[1] {
			b = New(100, 10*time.Second) // both fill the budget
			b.share = 100
		}
		ctx := context.Background()
		older, _ := b.Acquire(ctx, callers[0], 50)
		younger, _ := b.Acquire(ctx, callers[1], 50)
		done := make(chan error, 1)
		go func() { done <- older.Grow(ctx, 50) }()
		time.Sleep(20 * time.Millisecond)
		begin := time.Now()
		err := younger.Grow(ctx, 50)
		if !errors.Is(err, ErrBusy) || time.Since(begin) > time.Second {
			t.Fatalf("%v: the younger stuck hold: %v after %v, want ErrBusy at once", callers, err, time.Since(begin))
		}
		younger.Release()
		if err := <-done; err != nil {
			t.Fatalf("%v: the older hold after the younger gave way: %v", callers, err)
		}
		older.Release()
	}
}

// TestTryGrow: a hold grows at once while its bytes fit in the budget and
// in its caller's share, and is refused at once (ErrBusy), unchanged, when
// they do not; a hold alone may pass its caller's share.
func TestTryGrow(t *testing.T) {
	b := New(400, time.Minute) // a share of 100
	ctx := context.Background()
	a1, _ := b.Acquire(ctx, "a", 10)
	if err := a1.TryGrow(150); err != nil {
		t.Fatalf("a hold alone past its caller's share: %v", err)
	}
	a2, _ := b.Acquire(ctx, "a", 0)
	begin := time.Now()
	if err := a2.TryGrow(1); !errors.Is(err, ErrBusy) || time.Since(begin) > time.Second {
		t.Errorf("a second hold of a caller past its share: %v after %v, want ErrBusy at once", err, time.Since(begin))
	}
	c, _ := b.Acquire(ctx, "c", 100)
	d, _ := b.Acquire(ctx, "d", 100)
	if err := c.TryGrow(41); !errors.Is(err, ErrBusy) {
		t.Errorf("past the budget: %v, want ErrBusy", err)
	}
	if all, ofC := b.Held("c"); all != 360 || ofC != 100 {
		t.Errorf("after refusals the budget holds %d (c %d), want 360 (c 100)", all, ofC)
	}
	for _, h := range []*Hold{a1, a2, c, d} {
		h.Release()
	}
}

// TestProgress: the first MinProgress bytes are due FirstProgress after
// the start, each further MinProgress ProgressWindow after the last.
func TestProgress(t *testing.T) {
	start := time.Now().Add(-time.Hour)
	p := NewProgress(start)
	if d := p.Deadline(); !d.Equal(start.Add(FirstProgress)) {
		t.Errorf("first deadline %v after the start, want %v", d.Sub(start), FirstProgress)
	}
	if p.Arrived(MinProgress - 1) {
		t.Error("less than MinProgress counted as progress")
	}
	before := time.Now()
	if !p.Arrived(MinProgress) {
		t.Error("MinProgress not counted as progress")
	}
	if d := p.Deadline(); d.Before(before.Add(ProgressWindow)) || d.After(time.Now().Add(ProgressWindow)) {
		t.Errorf("deadline %v from now after progress, want %v", time.Until(d), ProgressWindow)
	}
	if p.Arrived(2*MinProgress - 1) {
		t.Error("progress counted from the start rather than from the last progress")
	}
}
