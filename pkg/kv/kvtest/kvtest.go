// Package kvtest is the conformance suite every kv engine passes: the same
// cases run against the bbolt engine and the etcd engine, so a domain store
// written against kv behaves the same on both. The concurrent cases check
// serializability where it is easiest to lose: lost updates, write skew over
// a scanned range (an insert into or delete from a range another transaction
// read), and results taken from an attempt that did not commit.
package kvtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/gatehouse/gatehouse/pkg/kv"
)

// Writers is how many goroutines the concurrent cases run.
const Writers = 32

// Run runs the suite. open returns a new, empty engine for each case and
// closes it at the test's cleanup.
func Run(t *testing.T, open func(t *testing.T) kv.Engine) {
	cases := []struct {
		name string
		fn   func(*testing.T, kv.Engine)
	}{
		{"GetPutDelete", testGetPutDelete},
		{"ReadYourWrites", testReadYourWrites},
		{"Scan", testScan},
		{"ScanThenWrite", testScanThenWrite},
		{"Sequences", testSequences},
		{"AbortWritesNothing", testAbort},
		{"ErrorsReturnedAsIs", testErrorsAsIs},
		{"ContextCancelled", testContextCancelled},
		{"ViewIsOneSnapshot", testViewSnapshot},
		{"LargeValue", testLargeValue},
		{"ConcurrentIncrements", testConcurrentIncrements},
		{"ConcurrentSequences", testConcurrentSequences},
		{"BoundedInsertUnderConcurrency", testBoundedInsert},
		{"DeleteInScannedRangeConflicts", testDeleteInScannedRange},
		{"ResultsFromTheCommittedAttempt", testResultsFromCommittedAttempt},
		{"Ready", testReady},
		{"RevisionNamesTheState", testRevision},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.fn(t, open(t)) })
	}
}

var ctx = context.Background()

func put(t *testing.T, e kv.Engine, pairs ...string) {
	t.Helper()
	err := e.Update(ctx, func(tx kv.WriteTx) error {
		for i := 0; i+1 < len(pairs); i += 2 {
			if err := tx.Put([]byte(pairs[i]), []byte(pairs[i+1])); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// get reads key in its own View; "" with ok false when absent.
func get(t *testing.T, e kv.Engine, key string) (value string, ok bool) {
	t.Helper()
	err := e.View(ctx, func(tx kv.ReadTx) error {
		v, err := tx.Get([]byte(key))
		value, ok = string(v), v != nil
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return value, ok
}

// scan lists "key=value" under prefix from start in one View.
func scan(t *testing.T, e kv.Engine, prefix, start string) []string {
	t.Helper()
	var out []string
	err := e.View(ctx, func(tx kv.ReadTx) error {
		var got []string
		err := tx.Scan([]byte(prefix), bytesOrNil(start), func(k, v []byte) error {
			got = append(got, string(k)+"="+string(v))
			return nil
		})
		out = got
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func count(t *testing.T, e kv.Engine, prefix string) int {
	t.Helper()
	var n int
	if err := e.View(ctx, func(tx kv.ReadTx) (err error) { n, err = tx.Count([]byte(prefix)); return err }); err != nil {
		t.Fatal(err)
	}
	return n
}

func bytesOrNil(s string) []byte {
	if s == "" {
		return nil
	}
	return []byte(s)
}

func testGetPutDelete(t *testing.T, e kv.Engine) {
	if v, ok := get(t, e, "a"); ok {
		t.Fatalf("Get of an absent key = %q, want absent", v)
	}
	put(t, e, "a", "1")
	if v, _ := get(t, e, "a"); v != "1" {
		t.Fatalf("Get = %q, want 1", v)
	}
	put(t, e, "a", "2")
	if v, _ := get(t, e, "a"); v != "2" {
		t.Fatalf("Get after overwrite = %q, want 2", v)
	}
	for range 2 { // deleting an absent key is no error
		if err := e.Update(ctx, func(tx kv.WriteTx) error { return tx.Delete([]byte("a")) }); err != nil {
			t.Fatal(err)
		}
	}
	if v, ok := get(t, e, "a"); ok {
		t.Fatalf("Get after Delete = %q, want absent", v)
	}
}

func testReadYourWrites(t *testing.T, e kv.Engine) {
	put(t, e, "p/1", "old", "p/2", "two")
	err := e.Update(ctx, func(tx kv.WriteTx) error {
		if err := tx.Put([]byte("p/1"), []byte("new")); err != nil {
			return err
		}
		if err := tx.Put([]byte("p/3"), []byte("three")); err != nil {
			return err
		}
		if err := tx.Delete([]byte("p/2")); err != nil {
			return err
		}
		if v, err := tx.Get([]byte("p/1")); err != nil || string(v) != "new" {
			return fmt.Errorf("get of a key written in the transaction = %q, %v; want new", v, err)
		}
		if v, err := tx.Get([]byte("p/2")); err != nil || v != nil {
			return fmt.Errorf("get of a key deleted in the transaction = %q, %v; want absent", v, err)
		}
		var got []string
		err := tx.Scan([]byte("p/"), nil, func(k, v []byte) error { got = append(got, string(k)+"="+string(v)); return nil })
		if want := []string{"p/1=new", "p/3=three"}; err != nil || !slices.Equal(got, want) {
			return fmt.Errorf("scan inside the transaction = %q, %v; want %q", got, err, want)
		}
		if n, err := tx.Count([]byte("p/")); err != nil || n != 2 {
			return fmt.Errorf("count inside the transaction = %d, %v; want 2", n, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := scan(t, e, "p/", ""), []string{"p/1=new", "p/3=three"}; !slices.Equal(got, want) {
		t.Fatalf("after commit: %q, want %q", got, want)
	}
}

func testScan(t *testing.T, e kv.Engine) {
	put(t, e, "a/3", "3", "a/1", "1", "b/1", "x", "a/2", "2", "a", "bare", "ab/1", "y", "a/4", "4")
	tests := []struct {
		prefix, start string
		want          []string
	}{
		{"a/", "", []string{"a/1=1", "a/2=2", "a/3=3", "a/4=4"}},
		{"a/", "a/3", []string{"a/3=3", "a/4=4"}},
		{"a/", "a/25", []string{"a/3=3", "a/4=4"}},
		{"a/", "a", []string{"a/1=1", "a/2=2", "a/3=3", "a/4=4"}}, // start before the prefix
		{"a/", "a/9", nil},
		{"a/", "b", nil},
		{"a", "", []string{"a=bare", "a/1=1", "a/2=2", "a/3=3", "a/4=4", "ab/1=y"}},
		{"", "", []string{"a=bare", "a/1=1", "a/2=2", "a/3=3", "a/4=4", "ab/1=y", "b/1=x"}},
		{"", "ab", []string{"ab/1=y", "b/1=x"}},
		{"c/", "", nil},
	}
	for _, tt := range tests {
		if got := scan(t, e, tt.prefix, tt.start); !slices.Equal(got, tt.want) {
			t.Errorf("Scan(%q, %q) = %q, want %q", tt.prefix, tt.start, got, tt.want)
		}
	}
	for prefix, want := range map[string]int{"a/": 4, "a": 6, "": 7, "b/": 1, "c": 0} {
		if got := count(t, e, prefix); got != want {
			t.Errorf("Count(%q) = %d, want %d", prefix, got, want)
		}
	}
	failed := errors.New("stop here")
	err := e.View(ctx, func(tx kv.ReadTx) error {
		var seen []string
		if err := tx.Scan([]byte("a/"), nil, func(k, _ []byte) error {
			if seen = append(seen, string(k)); len(seen) == 2 {
				return kv.ErrStop
			}
			return nil
		}); err != nil || !slices.Equal(seen, []string{"a/1", "a/2"}) {
			return fmt.Errorf("scan stopped with ErrStop after two keys: saw %q, err %v; want a/1 a/2 and nil", seen, err)
		}
		if err := tx.Scan([]byte("a/"), nil, func(k, _ []byte) error { return failed }); !errors.Is(err, failed) {
			return fmt.Errorf("scan whose function fails: %v, want %v", err, failed)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// testScanThenWrite writes inside a scan's function, as a cascade delete does.
func testScanThenWrite(t *testing.T, e kv.Engine) {
	put(t, e, "s/1", "a", "s/2", "b", "s/3", "c", "t/1", "keep")
	err := e.Update(ctx, func(tx kv.WriteTx) error {
		return tx.Scan([]byte("s/"), nil, func(k, v []byte) error {
			if err := tx.Put([]byte("copy/"+string(k)), bytes.Clone(v)); err != nil {
				return err
			}
			return tx.Delete(k)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := scan(t, e, "", ""), []string{"copy/s/1=a", "copy/s/2=b", "copy/s/3=c", "t/1=keep"}; !slices.Equal(got, want) {
		t.Fatalf("after moving s/ inside a scan: %q, want %q", got, want)
	}
}

func nextSeq(t *testing.T, e kv.Engine, name string) uint64 {
	t.Helper()
	var n uint64
	if err := e.Update(ctx, func(tx kv.WriteTx) (err error) { n, err = tx.NextSeq(name); return err }); err != nil {
		t.Fatal(err)
	}
	return n
}

func testSequences(t *testing.T, e kv.Engine) {
	for want := uint64(1); want <= 3; want++ {
		if got := nextSeq(t, e, "x"); got != want {
			t.Fatalf("NextSeq(x) = %d, want %d", got, want)
		}
	}
	if got := nextSeq(t, e, "y"); got != 1 {
		t.Fatalf("NextSeq(y) = %d, want 1: sequences are independent", got)
	}
	var pair [2]uint64
	err := e.Update(ctx, func(tx kv.WriteTx) error {
		a, err := tx.NextSeq("x")
		if err != nil {
			return err
		}
		b, err := tx.NextSeq("x")
		pair = [2]uint64{a, b}
		return err
	})
	if err != nil || pair != [2]uint64{4, 5} {
		t.Fatalf("two NextSeq in one transaction = %v, %v; want [4 5]", pair, err)
	}
	aborted := errors.New("abort")
	if err := e.Update(ctx, func(tx kv.WriteTx) error {
		if _, err := tx.NextSeq("x"); err != nil {
			return err
		}
		return aborted
	}); !errors.Is(err, aborted) {
		t.Fatalf("aborted transaction: %v, want %v", err, aborted)
	}
	if got := nextSeq(t, e, "x"); got != 6 {
		t.Fatalf("NextSeq after an aborted transaction took 6: %d, want 6 (an aborted transaction hands out nothing)", got)
	}
	if n := count(t, e, ""); n != 0 {
		t.Fatalf("Count over the whole key space = %d, want 0: sequences are not keys", n)
	}
	if got := scan(t, e, "", ""); len(got) != 0 {
		t.Fatalf("Scan over the whole key space = %q, want nothing: sequences are not keys", got)
	}
}

func testAbort(t *testing.T, e kv.Engine) {
	put(t, e, "k/1", "one", "k/2", "two")
	failed := errors.New("refused")
	err := e.Update(ctx, func(tx kv.WriteTx) error {
		for _, step := range []func() error{
			func() error { return tx.Put([]byte("k/1"), []byte("changed")) },
			func() error { return tx.Put([]byte("k/3"), []byte("new")) },
			func() error { return tx.Delete([]byte("k/2")) },
		} {
			if err := step(); err != nil {
				return err
			}
		}
		return failed
	})
	if !errors.Is(err, failed) {
		t.Fatalf("Update whose function fails: %v, want %v", err, failed)
	}
	if got, want := scan(t, e, "k/", ""), []string{"k/1=one", "k/2=two"}; !slices.Equal(got, want) {
		t.Fatalf("after an aborted transaction: %q, want %q (nothing written)", got, want)
	}
}

type wrapped struct{ error }

func testErrorsAsIs(t *testing.T, e kv.Engine) {
	w := wrapped{errors.New("mine")}
	if err := e.View(ctx, func(kv.ReadTx) error { return w }); err != error(w) {
		t.Errorf("View returned %v, want the function's error as is", err)
	}
	if err := e.Update(ctx, func(kv.WriteTx) error { return w }); err != error(w) {
		t.Errorf("Update returned %v, want the function's error as is", err)
	}
}

func testContextCancelled(t *testing.T, e kv.Engine) {
	c, cancel := context.WithCancel(ctx)
	cancel()
	ran := false
	if err := e.Update(c, func(tx kv.WriteTx) error { ran = true; return tx.Put([]byte("k"), []byte("v")) }); !errors.Is(err, context.Canceled) {
		t.Errorf("Update with a cancelled context: %v, want context.Canceled", err)
	}
	if err := e.View(c, func(kv.ReadTx) error { ran = true; return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("View with a cancelled context: %v, want context.Canceled", err)
	}
	if _, ok := get(t, e, "k"); ok || ran {
		t.Errorf("a cancelled context still ran a function (%v) or wrote (%v)", ran, ok)
	}
}

func testViewSnapshot(t *testing.T, e kv.Engine) {
	put(t, e, "v/1", "old", "v/2", "old")
	err := e.View(ctx, func(tx kv.ReadTx) error {
		if v, err := tx.Get([]byte("v/1")); err != nil || string(v) != "old" {
			return fmt.Errorf("first read = %q, %v", v, err)
		}
		// Another writer commits while this View is open.
		done := make(chan error, 1)
		go func() {
			done <- e.Update(ctx, func(w kv.WriteTx) error {
				if err := w.Put([]byte("v/1"), []byte("new")); err != nil {
					return err
				}
				if err := w.Put([]byte("v/3"), []byte("new")); err != nil {
					return err
				}
				return w.Delete([]byte("v/2"))
			})
		}()
		if err := <-done; err != nil {
			return err
		}
		v, err := tx.Get([]byte("v/1"))
		if err != nil || string(v) != "old" {
			return fmt.Errorf("read after a concurrent commit = %q, %v; want old (one snapshot)", v, err)
		}
		var keys []string
		err = tx.Scan([]byte("v/"), nil, func(k, _ []byte) error { keys = append(keys, string(k)); return nil })
		if want := []string{"v/1", "v/2"}; err != nil || !slices.Equal(keys, want) {
			return fmt.Errorf("scan after a concurrent commit = %q, %v; want %q", keys, err, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := scan(t, e, "v/", ""), []string{"v/1=new", "v/3=new"}; !slices.Equal(got, want) {
		t.Fatalf("a View after the commit = %q, want %q", got, want)
	}
}

func testLargeValue(t *testing.T, e kv.Engine) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<14) // 256 KiB
	if err := e.Update(ctx, func(tx kv.WriteTx) error { return tx.Put([]byte("big"), big) }); err != nil {
		t.Fatal(err)
	}
	if v, _ := get(t, e, "big"); v != string(big) {
		t.Fatalf("a 256 KiB value came back as %d bytes", len(v))
	}
}

// parallel runs fn in Writers goroutines and fails on the first error.
func parallel(t *testing.T, fn func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, Writers)
	for i := range Writers {
		wg.Go(func() { errs <- fn(i) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func testConcurrentIncrements(t *testing.T, e kv.Engine) {
	const each = 5
	parallel(t, func(int) error {
		for range each {
			err := e.Update(ctx, func(tx kv.WriteTx) error {
				v, err := tx.Get([]byte("counter"))
				if err != nil {
					return err
				}
				n := 0
				if v != nil {
					fmt.Sscan(string(v), &n)
				}
				return tx.Put([]byte("counter"), fmt.Append(nil, n+1))
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if v, _ := get(t, e, "counter"); v != fmt.Sprint(Writers*each) {
		t.Fatalf("counter = %s after %d read-modify-write increments, want %d (no lost update)", v, Writers*each, Writers*each)
	}
}

func testConcurrentSequences(t *testing.T, e kv.Engine) {
	const each = 5
	got := make([][]uint64, Writers)
	parallel(t, func(i int) error {
		for range each {
			var n uint64
			err := e.Update(ctx, func(tx kv.WriteTx) (err error) { n, err = tx.NextSeq("ids"); return err })
			if err != nil {
				return err
			}
			got[i] = append(got[i], n)
		}
		return nil
	})
	all := slices.Sorted(slices.Values(slices.Concat(got...)))
	for i, n := range all {
		if n != uint64(i+1) {
			t.Fatalf("ids handed out to concurrent writers: %v, want 1..%d each once", all, Writers*each)
		}
	}
}

// testBoundedInsert inserts only while fewer than limit keys are under a
// prefix: without conflicts on scanned ranges, concurrent writers overshoot.
func testBoundedInsert(t *testing.T, e kv.Engine) {
	const limit = 5
	for _, how := range []string{"count", "scan"} {
		prefix := "bounded-" + how + "/"
		parallel(t, func(i int) error {
			return e.Update(ctx, func(tx kv.WriteTx) error {
				n := 0
				var err error
				if how == "count" {
					n, err = tx.Count([]byte(prefix))
				} else {
					err = tx.Scan([]byte(prefix), nil, func(_, _ []byte) error { n++; return nil })
				}
				if err != nil || n >= limit {
					return err
				}
				return tx.Put(fmt.Appendf(nil, "%s%02d", prefix, i), []byte("x"))
			})
		})
		if n := count(t, e, prefix); n != limit {
			t.Errorf("%d writers inserting while %s < %d: %d keys, want exactly %d", Writers, how, limit, n, limit)
		}
	}
}

// testDeleteInScannedRange deletes a key under a prefix only while more than
// one remains, each writer choosing a different key: only a conflict on the
// scanned range keeps the last one.
func testDeleteInScannedRange(t *testing.T, e kv.Engine) {
	var pairs []string
	for i := range 8 {
		pairs = append(pairs, fmt.Sprintf("keep/%02d", i), "x")
	}
	put(t, e, pairs...)
	parallel(t, func(i int) error {
		return e.Update(ctx, func(tx kv.WriteTx) error {
			var keys [][]byte
			if err := tx.Scan([]byte("keep/"), nil, func(k, _ []byte) error { keys = append(keys, bytes.Clone(k)); return nil }); err != nil {
				return err
			}
			if len(keys) <= 1 {
				return nil
			}
			return tx.Delete(keys[i%len(keys)])
		})
	})
	if n := count(t, e, "keep/"); n != 1 {
		t.Fatalf("%d writers deleting while more than one key remains: %d left, want 1", Writers, n)
	}
}

// testResultsFromCommittedAttempt: an update function may run more than
// once; what the caller gets must come from the attempt that committed.
func testResultsFromCommittedAttempt(t *testing.T, e kv.Engine) {
	got := make([]int, Writers)
	parallel(t, func(i int) error {
		return e.Update(ctx, func(tx kv.WriteTx) error {
			v, err := tx.Get([]byte("turn"))
			if err != nil {
				return err
			}
			n := 0
			if v != nil {
				fmt.Sscan(string(v), &n)
			}
			if err := tx.Put([]byte("turn"), fmt.Append(nil, n+1)); err != nil {
				return err
			}
			got[i] = n + 1 // last, after every step that can fail
			return nil
		})
	})
	slices.Sort(got)
	for i, n := range got {
		if n != i+1 {
			t.Fatalf("values the callers saw: %v, want 1..%d each once", got, Writers)
		}
	}
}

func testReady(t *testing.T, e kv.Engine) {
	if err := e.Ready(ctx); err != nil {
		t.Fatalf("Ready on an open engine: %v", err)
	}
}

// testRevision: an engine's read-only transactions name the state they read
// (kv.Revisioned) — the same revision while nothing is written, another one
// after a write commits, and a View keeps its own while a writer commits —
// and a read-write transaction does not claim one.
func testRevision(t *testing.T, e kv.Engine) {
	put(t, e, "r/1", "a")
	rev := func() int64 {
		t.Helper()
		var rev int64
		var ok bool
		if err := e.View(ctx, func(tx kv.ReadTx) error { rev, ok = kv.RevisionOf(tx); return nil }); err != nil {
			t.Fatal(err)
		}
		if !ok {
			t.Fatal("a View names no revision")
		}
		return rev
	}
	first := rev()
	if again := rev(); again != first {
		t.Fatalf("revision %d, then %d with no write between", first, again)
	}
	put(t, e, "r/2", "b")
	second := rev()
	if second <= first {
		t.Fatalf("revision %d after a write, %d before", second, first)
	}
	err := e.View(ctx, func(tx kv.ReadTx) error {
		before, _ := kv.RevisionOf(tx)
		done := make(chan error, 1)
		go func() {
			done <- e.Update(ctx, func(w kv.WriteTx) error { return w.Put([]byte("r/3"), []byte("c")) })
		}()
		if err := <-done; err != nil {
			return err
		}
		if after, _ := kv.RevisionOf(tx); after != before || before != second {
			return fmt.Errorf("a View's revision moved from %d to %d (%d when it began) while a writer committed", before, after, second)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if third := rev(); third <= second {
		t.Fatalf("revision %d after a concurrent write, %d before", third, second)
	}
	var inUpdate bool
	if err := e.Update(ctx, func(w kv.WriteTx) error {
		_, inUpdate = kv.RevisionOf(w)
		return w.Put([]byte("r/4"), []byte("d"))
	}); err != nil {
		t.Fatal(err)
	}
	if inUpdate {
		t.Fatal("a read-write transaction names a revision")
	}
}
