package etcdkv_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/pkg/freeport"
	"github.com/gatehouse/gatehouse/pkg/kv"
	"github.com/gatehouse/gatehouse/pkg/kv/etcdkv"
	"github.com/gatehouse/gatehouse/pkg/kv/etcdkv/etcdtest"
	"github.com/gatehouse/gatehouse/pkg/kv/kvtest"
)

var prefixes atomic.Int64

// open opens an engine on a fresh prefix of the cluster.
func open(t testing.TB, c *etcdtest.Cluster) *etcdkv.Engine {
	t.Helper()
	e, err := etcdkv.Open(context.Background(), etcdkv.Config{
		Endpoints: c.Endpoints(),
		Prefix:    fmt.Sprintf("/test/%s/%d/", strings.ReplaceAll(t.Name(), "/", "_"), prefixes.Add(1)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func put(t testing.TB, e kv.Engine, kvs ...string) {
	t.Helper()
	err := e.Update(context.Background(), func(tx kv.WriteTx) error {
		for i := 0; i < len(kvs); i += 2 {
			if err := tx.Put([]byte(kvs[i]), []byte(kvs[i+1])); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func del(t testing.TB, e kv.Engine, keys ...string) {
	t.Helper()
	err := e.Update(context.Background(), func(tx kv.WriteTx) error {
		for _, k := range keys {
			if err := tx.Delete([]byte(k)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func get(t testing.TB, e kv.Engine, key string) string {
	t.Helper()
	var v []byte
	err := e.View(context.Background(), func(tx kv.ReadTx) error {
		got, err := tx.Get([]byte(key))
		v = bytes.Clone(got)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(v)
}

func scan(t testing.TB, tx kv.ReadTx, prefix, start string) []string {
	t.Helper()
	var out []string
	var s []byte
	if start != "" {
		s = []byte(start)
	}
	err := tx.Scan([]byte(prefix), s, func(k, v []byte) error {
		out = append(out, string(k)+"="+string(v))
		return nil
	})
	if err != nil {
		t.Error(err) // not Fatal: update functions run on the engine's committer
	}
	return out
}

// replica opens a second engine on e's prefix: another process of the same
// service, whose commits e's batches see only as etcd's.
func replica(t testing.TB, c *etcdtest.Cluster, e *etcdkv.Engine) *etcdkv.Engine {
	t.Helper()
	r, err := etcdkv.Open(context.Background(), etcdkv.Config{Endpoints: c.Endpoints(), Prefix: e.Prefix()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// meanwhile runs fn on a goroutine of its own and waits for it. An update
// function runs on its engine's committer, which must not be the goroutine
// that fails a test (t.Fatal) or waits for that engine.
func meanwhile(fn func()) {
	var wg sync.WaitGroup
	wg.Go(fn)
	wg.Wait()
}

// TestConformance runs the suite every kv engine passes.
func TestConformance(t *testing.T) {
	c := etcdtest.Start(t, 1)
	kvtest.Run(t, func(t *testing.T) kv.Engine { return open(t, c) })
}

// TestEngine runs the engine's own cases on one member.
func TestEngine(t *testing.T) {
	t.Parallel() // its own etcd on free ports, overlapping TestFaults' waits
	c := etcdtest.Start(t, 1)
	ctx := context.Background()

	t.Run("ReadOwnWritesAndScanMerge", func(t *testing.T) {
		e := open(t, c)
		put(t, e, "a/1", "one", "a/3", "three", "a/5", "five", "b/1", "other")
		err := e.Update(ctx, func(tx kv.WriteTx) error {
			tx.Put([]byte("a/2"), []byte("two"))
			tx.Put([]byte("a/3"), []byte("THREE"))
			tx.Delete([]byte("a/5"))
			tx.Put([]byte("a/6"), []byte("six"))
			got := strings.Join(scan(t, tx, "a/", ""), " ")
			if want := "a/1=one a/2=two a/3=THREE a/6=six"; got != want {
				t.Errorf("scan inside the transaction = %q, want %q", got, want)
			}
			got = strings.Join(scan(t, tx, "a/", "a/3"), " ")
			if want := "a/3=THREE a/6=six"; got != want {
				t.Errorf("scan from a/3 = %q, want %q", got, want)
			}
			n, err := tx.Count([]byte("a/"))
			if err != nil || n != 4 {
				t.Errorf("Count = %d, %v; want 4", n, err)
			}
			v, _ := tx.Get([]byte("a/5"))
			if v != nil {
				t.Errorf("Get of a key deleted in the transaction = %q, want nil", v)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := get(t, e, "a/3"); got != "THREE" {
			t.Errorf("after commit a/3 = %q", got)
		}
	})

	t.Run("ErrorAbortsWholeTransaction", func(t *testing.T) {
		e := open(t, c)
		boom := errors.New("boom")
		err := e.Update(ctx, func(tx kv.WriteTx) error {
			tx.Put([]byte("k"), []byte("v"))
			if _, err := tx.NextSeq("ids"); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("Update = %v, want boom", err)
		}
		if got := get(t, e, "k"); got != "" {
			t.Errorf("k = %q after an aborted transaction", got)
		}
		var id uint64
		e.Update(ctx, func(tx kv.WriteTx) error {
			var err error
			id, err = tx.NextSeq("ids")
			return err
		})
		if id != 1 {
			t.Errorf("first committed NextSeq = %d, want 1 (the aborted one handed out nothing)", id)
		}
	})

	t.Run("ScanPagesAtOneRevision", func(t *testing.T) {
		e := open(t, c)
		var kvs []string
		for i := range 300 { // more than two pages
			kvs = append(kvs, fmt.Sprintf("p/%03d", i), "old")
		}
		for i := 0; i < len(kvs); i += 100 {
			put(t, e, kvs[i:i+100]...)
		}
		seen, changed := 0, false
		err := e.View(ctx, func(tx kv.ReadTx) error {
			return tx.Scan([]byte("p/"), nil, func(k, v []byte) error {
				seen++
				if string(v) != "old" {
					return fmt.Errorf("%s = %q: a write after the snapshot leaked in", k, v)
				}
				if !changed {
					changed = true
					put(t, e, "p/299", "new", "p/300", "new")
					del(t, e, "p/250")
				}
				return nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		if seen != 300 {
			t.Errorf("scan saw %d keys, want the snapshot's 300", seen)
		}
	})

	t.Run("ScanStop", func(t *testing.T) {
		e := open(t, c)
		put(t, e, "s/1", "", "s/2", "", "s/3", "")
		n := 0
		err := e.View(ctx, func(tx kv.ReadTx) error {
			return tx.Scan([]byte("s/"), nil, func(_, _ []byte) error {
				if n++; n == 2 {
					return kv.ErrStop
				}
				return nil
			})
		})
		if err != nil || n != 2 {
			t.Errorf("Scan with ErrStop = %v after %d keys, want nil after 2", err, n)
		}
	})

	// Each conflict case: the transaction reads, then another writer (a
	// replica on the same prefix) commits a change to what it read before it
	// commits; the first attempt must fail and the function run again on the
	// new state.
	conflicts := []struct {
		name  string
		setup []string
		read  func(tx kv.WriteTx) (string, error)
		other func(t testing.TB, e kv.Engine)
		want  string // what the second attempt reads
	}{
		{"KeyUpdate", []string{"x", "1"},
			func(tx kv.WriteTx) (string, error) { v, err := tx.Get([]byte("x")); return string(v), err },
			func(t testing.TB, e kv.Engine) { put(t, e, "x", "2") }, "2"},
		{"KeyInsert", nil,
			func(tx kv.WriteTx) (string, error) { v, err := tx.Get([]byte("x")); return string(v), err },
			func(t testing.TB, e kv.Engine) { put(t, e, "x", "new") }, "new"},
		{"KeyDelete", []string{"x", "1"},
			func(tx kv.WriteTx) (string, error) { v, err := tx.Get([]byte("x")); return string(v), err },
			func(t testing.TB, e kv.Engine) { del(t, e, "x") }, ""},
		{"RangeInsert", []string{"r/a", "1"},
			func(tx kv.WriteTx) (string, error) { n, err := tx.Count([]byte("r/")); return fmt.Sprint(n), err },
			func(t testing.TB, e kv.Engine) { put(t, e, "r/b", "2") }, "2"},
		{"RangeDelete", []string{"r/a", "1", "r/b", "2"},
			func(tx kv.WriteTx) (string, error) { n, err := tx.Count([]byte("r/")); return fmt.Sprint(n), err },
			func(t testing.TB, e kv.Engine) { del(t, e, "r/b") }, "1"},
		{"NestedRangeDelete", []string{"r/a/1", "1", "r/b/1", "2"},
			func(tx kv.WriteTx) (string, error) {
				return strings.Join(scan(t, tx, "r/", ""), " "), nil
			},
			func(t testing.TB, e kv.Engine) { del(t, e, "r/b/1") }, "r/a/1=1"},
		{"ScanFromStartInsert", []string{"r/a", "1", "r/c", "3"},
			func(tx kv.WriteTx) (string, error) { return strings.Join(scan(t, tx, "r/", "r/b"), " "), nil },
			func(t testing.TB, e kv.Engine) { put(t, e, "r/d", "4") }, "r/c=3 r/d=4"},
		{"RangeUpdate", []string{"r/a", "1"},
			func(tx kv.WriteTx) (string, error) { return strings.Join(scan(t, tx, "r/", ""), " "), nil },
			func(t testing.TB, e kv.Engine) { put(t, e, "r/a", "9") }, "r/a=9"},
		{"Sequence", nil,
			func(tx kv.WriteTx) (string, error) { n, err := tx.NextSeq("ids"); return fmt.Sprint(n), err },
			func(t testing.TB, e kv.Engine) {
				e.Update(context.Background(), func(tx kv.WriteTx) error { _, err := tx.NextSeq("ids"); return err })
			}, "2"},
	}
	for _, tc := range conflicts {
		t.Run("Conflict"+tc.name, func(t *testing.T) {
			e := open(t, c)
			other := replica(t, c, e)
			if tc.setup != nil {
				put(t, e, tc.setup...)
			}
			var reads []string
			err := e.Update(ctx, func(tx kv.WriteTx) error {
				got, err := tc.read(tx)
				if err != nil {
					return err
				}
				reads = append(reads, got) // test bookkeeping, not a result
				if len(reads) == 1 {
					meanwhile(func() { tc.other(t, other) })
				}
				return tx.Put([]byte("result"), []byte(got))
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(reads) != 2 || reads[1] != tc.want {
				t.Errorf("attempts read %q, want a second attempt reading %q", reads, tc.want)
			}
			if got := get(t, e, "result"); got != tc.want {
				t.Errorf("committed result %q, want %q", got, tc.want)
			}
		})
	}

	t.Run("UnrelatedWritesDoNotConflict", func(t *testing.T) {
		e := open(t, c)
		other := replica(t, c, e)
		put(t, e, "r/a", "1", "q/a", "1")
		attempts := 0
		err := e.Update(ctx, func(tx kv.WriteTx) error {
			attempts++
			scan(t, tx, "r/", "")
			tx.Get([]byte("r/a"))
			if attempts == 1 {
				meanwhile(func() {
					put(t, other, "q/b", "2", "rr", "x")
					del(t, other, "q/a")
				})
			}
			return tx.Put([]byte("r/z"), []byte("1"))
		})
		if err != nil || attempts != 1 {
			t.Errorf("Update = %v after %d attempts; writes outside the read set must not conflict", err, attempts)
		}
	})

	t.Run("ConflictBound", func(t *testing.T) {
		e := open(t, c)
		other := replica(t, c, e)
		attempts := 0
		err := e.Update(ctx, func(tx kv.WriteTx) error {
			attempts++
			if _, err := tx.Get([]byte("hot")); err != nil {
				return err
			}
			meanwhile(func() { put(t, other, "hot", fmt.Sprint(attempts)) })
			return tx.Put([]byte("cold"), []byte("x"))
		})
		if !errors.Is(err, kv.ErrConflict) {
			t.Fatalf("Update = %v after %d attempts, want ErrConflict", err, attempts)
		}
		if get(t, e, "cold") != "" {
			t.Error("a transaction that gave up wrote")
		}
	})

	t.Run("ManyReadsCoarsenCompares", func(t *testing.T) {
		e := open(t, c)
		other := replica(t, c, e)
		var kvs []string
		for i := range 200 {
			kvs = append(kvs, fmt.Sprintf("m/%d/v", i), "1")
		}
		put(t, e, kvs[:200]...)
		put(t, e, kvs[200:]...)
		for _, interfere := range []bool{false, true} {
			attempts := 0
			err := e.Update(ctx, func(tx kv.WriteTx) error {
				attempts++
				for i := range 200 {
					if _, err := tx.Get(fmt.Appendf(nil, "m/%d/v", i)); err != nil {
						return err
					}
				}
				if interfere && attempts == 1 {
					meanwhile(func() { del(t, other, "m/7/v") })
				}
				return tx.Put([]byte("sum"), []byte("x"))
			})
			if err != nil {
				t.Fatal(err)
			}
			if want := map[bool]int{false: 1, true: 2}[interfere]; attempts != want {
				t.Errorf("interfering delete %v: %d attempts, want %d", interfere, attempts, want)
			}
		}
	})

	t.Run("TooLarge", func(t *testing.T) {
		e := open(t, c)
		big := bytes.Repeat([]byte("x"), 1600*1024)
		err := e.Update(ctx, func(tx kv.WriteTx) error {
			tx.Put([]byte("small"), []byte("s"))
			return tx.Put([]byte("big"), big)
		})
		if !errors.Is(err, kv.ErrTooLarge) || !strings.Contains(err.Error(), "--max-request-bytes") {
			t.Errorf("2 MiB value: %v, want ErrTooLarge naming --max-request-bytes", err)
		}
		err = e.Update(ctx, func(tx kv.WriteTx) error {
			for i := range 200 {
				tx.Put(fmt.Appendf(nil, "o/%d", i), nil)
			}
			return nil
		})
		if !errors.Is(err, kv.ErrTooLarge) || !strings.Contains(err.Error(), "--max-txn-ops") {
			t.Errorf("200 puts: %v, want ErrTooLarge naming --max-txn-ops", err)
		}
		if get(t, e, "small") != "" || get(t, e, "o/0") != "" {
			t.Error("part of a refused transaction was written")
		}
		// Just below the limit goes through.
		put(t, e, "fits", string(bytes.Repeat([]byte("y"), 1400*1024)))
	})

	t.Run("PrefixesAreSeparate", func(t *testing.T) {
		a, b := open(t, c), open(t, c)
		put(t, a, "k", "a")
		if got := get(t, b, "k"); got != "" {
			t.Errorf("engine b sees engine a's key: %q", got)
		}
	})

	t.Run("ConcurrentCounter", func(t *testing.T) {
		e := open(t, c)
		const workers, each = 8, 10
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for range workers {
			wg.Go(func() {
				for range each {
					err := e.Update(ctx, func(tx kv.WriteTx) error {
						v, err := tx.Get([]byte("n"))
						if err != nil {
							return err
						}
						var n int
						fmt.Sscan(string(v), &n)
						return tx.Put([]byte("n"), fmt.Appendf(nil, "%d", n+1))
					})
					if err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if got, want := get(t, e, "n"), fmt.Sprint(workers*each); got != want {
			t.Errorf("counter = %s, want %s (a lost update)", got, want)
		}
	})

	t.Run("ConcurrentSequence", func(t *testing.T) {
		a := open(t, c)
		// Two engines on one prefix stand for two replicas.
		b, err := etcdkv.Open(ctx, etcdkv.Config{Endpoints: c.Endpoints(), Prefix: a.Prefix()})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		var mu sync.Mutex
		seen := map[uint64]bool{}
		var wg sync.WaitGroup
		for w := range 6 {
			e := []*etcdkv.Engine{a, b}[w%2]
			wg.Go(func() {
				for range 10 {
					var id uint64
					err := e.Update(ctx, func(tx kv.WriteTx) error {
						n, err := tx.NextSeq("ids")
						if err != nil {
							return err
						}
						id = n
						return tx.Put(fmt.Appendf(nil, "rec/%d", n), nil)
					})
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					if seen[id] {
						t.Errorf("id %d handed out twice", id)
					}
					seen[id] = true
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(seen) != 60 {
			t.Errorf("%d distinct ids, want 60", len(seen))
		}
	})
}

func TestOpenNoEndpoint(t *testing.T) {
	t.Parallel() // waits out its 2 s start timeout
	l := freeport.Addr(t)
	start := time.Now()
	_, err := etcdkv.Open(context.Background(), etcdkv.Config{
		Endpoints:    []string{l},
		Prefix:       "/x/",
		StartTimeout: 2 * time.Second,
	})
	if err == nil || !strings.Contains(err.Error(), l) || !errors.Is(err, kv.ErrUnavailable) {
		t.Fatalf("Open on a dead endpoint = %v, want ErrUnavailable naming %s", err, l)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Open took %s to fail", d)
	}
}
