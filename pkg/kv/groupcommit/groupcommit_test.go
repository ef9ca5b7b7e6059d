package groupcommit

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/pkg/kv"
)

// recorder is a commit function that runs each call's function (with no
// transaction) and remembers the batches, in order.
type recorder struct {
	mu      sync.Mutex
	batches [][]string
	gate    chan struct{} // when set, the first commit waits for it
	atGate  chan struct{} // closed when the first commit waits at the gate
	cut     int           // when >0, a batch of more calls is cut to this many
}

func gated(cut int) *recorder {
	return &recorder{gate: make(chan struct{}), atGate: make(chan struct{}), cut: cut}
}

func (r *recorder) commit(batch []*Call) []*Call {
	if r.gate != nil {
		close(r.atGate)
		<-r.gate
		r.gate = nil
	}
	var rest []*Call
	if r.cut > 0 && len(batch) > r.cut {
		batch, rest = batch[:r.cut], batch[r.cut:]
	}
	var names []string
	for _, c := range batch {
		names = append(names, c.Ctx.Value(nameKey{}).(string))
		func() {
			defer func() {
				if p := recover(); p != nil {
					c.Panicked = p
				}
			}()
			c.Err = c.Fn(nil)
		}()
	}
	r.mu.Lock()
	r.batches = append(r.batches, names)
	r.mu.Unlock()
	for _, c := range batch {
		c.Answer(nil)
	}
	return rest
}

type nameKey struct{}

func named(name string) context.Context {
	return context.WithValue(context.Background(), nameKey{}, name)
}

// queueWhileBlocked starts one call, which the commit holds at the gate,
// then queues the others and opens the gate once all wait.
func queueWhileBlocked(t *testing.T, q *Queue, r *recorder, names []string, fn func(name string) error) []error {
	t.Helper()
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	wg.Go(func() { errs[0] = q.Update(named(names[0]), func(kv.WriteTx) error { return fn(names[0]) }) })
	<-r.atGate // the committer holds the first call
	for i, n := range names[1:] {
		wg.Go(func() { errs[i+1] = q.Update(named(n), func(kv.WriteTx) error { return fn(n) }) })
	}
	for q.Len() != len(names)-1 {
		runtime.Gosched()
	}
	close(r.gate)
	wg.Wait()
	return errs
}

func TestCallsQueuedDuringACommitShareTheNext(t *testing.T) {
	r := gated(0)
	q := Start(8, r.commit)
	defer q.Close()
	names := []string{"first", "a", "b", "c", "d"}
	errs := queueWhileBlocked(t, q, r, names, func(n string) error {
		if n == "c" {
			return errors.New("c failed")
		}
		return nil
	})
	if len(r.batches) != 2 || !slices.Equal(r.batches[0], []string{"first"}) || len(r.batches[1]) != 4 {
		t.Fatalf("batches %v, want [first] then the four queued meanwhile", r.batches)
	}
	for i, n := range names {
		if (errs[i] != nil) != (n == "c") {
			t.Errorf("%s answered %v", n, errs[i])
		}
	}
}

func TestBatchesAreAtMostMaxAndCutCallsLeadTheNext(t *testing.T) {
	r := gated(2)
	q := Start(3, r.commit)
	defer q.Close()
	queueWhileBlocked(t, q, r, []string{"first", "a", "b", "c"}, func(string) error { return nil })
	var all []string
	for _, b := range r.batches {
		if len(b) > 2 {
			t.Errorf("batch %v is longer than the commit's cut", b)
		}
		all = append(all, b...)
	}
	if len(all) != 4 || all[0] != "first" {
		t.Fatalf("committed %v, want every call once, first first", all)
	}
	// the queue holds at most max: the three queued calls were one batch,
	// cut to two; the third led the next batch
	if len(r.batches) != 3 || len(r.batches[2]) != 1 {
		t.Errorf("batches %v, want [first] [x y] [z]", r.batches)
	}
}

func TestOwnOutcomeWinsOverTheBatchAnswer(t *testing.T) {
	own := errors.New("own")
	c := &Call{done: make(chan struct{}, 1), Err: own}
	c.Answer(errors.New("batch"))
	if c.Err != own {
		t.Errorf("Err %v, want the call's own", c.Err)
	}
	c = &Call{done: make(chan struct{}, 1)}
	batch := errors.New("batch")
	c.Answer(batch)
	if c.Err != batch {
		t.Errorf("Err %v, want the batch's", c.Err)
	}
}

func TestPanicIsRaisedInTheCaller(t *testing.T) {
	q := Start(4, (&recorder{}).commit)
	defer q.Close()
	defer func() {
		if p := recover(); p != "boom" {
			t.Errorf("recovered %v, want boom", p)
		}
	}()
	q.Update(named("p"), func(kv.WriteTx) error { panic("boom") })
	t.Error("Update returned after its function panicked")
}

func TestCanceledContextIsNotQueued(t *testing.T) {
	r := &recorder{}
	q := Start(4, r.commit)
	defer q.Close()
	ctx, cancel := context.WithCancel(named("x"))
	cancel()
	if err := q.Update(ctx, func(kv.WriteTx) error { t.Error("ran"); return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("Update with a canceled context: %v", err)
	}
	if len(r.batches) != 0 {
		t.Errorf("batches %v, want none", r.batches)
	}
}

func TestCloseDrainsThenRefuses(t *testing.T) {
	r := gated(0)
	q := Start(8, r.commit)
	var wg sync.WaitGroup
	var ran sync.Map
	update := func(n string) {
		if err := q.Update(named(n), func(kv.WriteTx) error { ran.Store(n, true); return nil }); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
	wg.Go(func() { update("a") })
	<-r.atGate // the committer holds a; b and c wait in the queue
	wg.Go(func() { update("b") })
	wg.Go(func() { update("c") })
	for q.Len() != 2 {
		runtime.Gosched()
	}
	closed := make(chan bool)
	go func() { closed <- q.Close() }()
	for !q.Closed() {
		runtime.Gosched()
	}
	if err := q.Update(named("late"), func(kv.WriteTx) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Errorf("Update after Close: %v, want ErrClosed", err)
	}
	if err := q.WhileOpen(func() error { return nil }); !errors.Is(err, ErrClosed) {
		t.Errorf("WhileOpen after Close: %v, want ErrClosed", err)
	}
	close(r.gate)
	if !<-closed {
		t.Error("the first Close reported the queue closed already")
	}
	wg.Wait()
	for _, n := range []string{"a", "b", "c"} {
		if _, ok := ran.Load(n); !ok {
			t.Errorf("%s, queued before Close, never ran", n)
		}
	}
	if q.Close() {
		t.Error("a second Close reported closing")
	}
}

func TestWhileOpenRuns(t *testing.T) {
	q := Start(1, (&recorder{}).commit)
	defer q.Close()
	want := errors.New("read")
	if err := q.WhileOpen(func() error { return want }); err != want {
		t.Errorf("WhileOpen: %v, want fn's error", err)
	}
}

// TestCohortWait: the next batch waits for the callers the last commit
// answered only while they are not back, for at most that commit's
// duration (and maxCohortWait), and only until as many calls as it
// answered have joined.
func TestCohortWait(t *testing.T) {
	ended := time.Now()
	before, after := &Call{queued: ended.Add(-time.Millisecond)}, &Call{queued: ended.Add(time.Microsecond)}
	for _, tc := range []struct {
		name    string
		last    cohort
		pending []*Call
		wait    time.Duration
		n       int
	}{
		{"lone writer: its call came after the commit", cohort{1, ended, 4 * time.Millisecond}, []*Call{after}, 0, 0},
		{"first commit", cohort{}, []*Call{before}, 0, 0},
		{"the other cohort queued during the commit", cohort{3, ended, 2 * time.Millisecond}, []*Call{before, before}, 2 * time.Millisecond, 5},
		{"some of the last commit's callers back", cohort{3, ended, 2 * time.Millisecond}, []*Call{before, after}, 2 * time.Millisecond, 4},
		{"all of them back", cohort{2, ended, 2 * time.Millisecond}, []*Call{before, after, after}, 0, 0},
		{"a long commit waits maxCohortWait at most", cohort{1, ended, time.Second}, []*Call{before}, maxCohortWait, 2},
	} {
		if wait, n := tc.last.wait(tc.pending); wait != tc.wait || n != tc.n {
			t.Errorf("%s: wait %v for %d calls, want %v for %d", tc.name, wait, n, tc.wait, tc.n)
		}
	}
}

// TestFillStopsAtItsCount: a batch that waits for more calls stops waiting
// as soon as it holds them, and takes what is queued when its time is up.
func TestFillStopsAtItsCount(t *testing.T) {
	q := &Queue{calls: make(chan *Call, 8)}
	for range 3 {
		q.calls <- &Call{}
	}
	start := time.Now()
	if got := q.fill(nil, 2, start.Add(time.Hour)); len(got) != 2 || time.Since(start) > time.Minute {
		t.Fatalf("fill for 2 took %d calls after %v", len(got), time.Since(start))
	}
	if got := q.fill(nil, 5, time.Now().Add(10*time.Millisecond)); len(got) != 1 {
		t.Fatalf("fill for 5 with 1 queued took %d calls", len(got))
	}
}
