package etcdkv_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gatehouse/gatehouse/pkg/kv"
	"github.com/gatehouse/gatehouse/pkg/kv/etcdkv"
	"github.com/gatehouse/gatehouse/pkg/kv/etcdkv/etcdtest"
)

// modRevs returns the revision at which each record key was last written,
// read with a client of its own: keys committed by one etcd Txn share it.
func modRevs(t *testing.T, c *etcdtest.Cluster, e *etcdkv.Engine, keys ...string) []int64 {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	var revs []int64
	for _, k := range keys {
		resp, err := cli.Get(context.Background(), e.Prefix()+"k/"+k)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Kvs) == 0 {
			t.Fatalf("record %s is missing", k)
		}
		revs = append(revs, resp.Kvs[0].ModRevision)
	}
	return revs
}

// inOneBatch calls Update with each of fns concurrently, holding the
// committer until all of them are queued, so that they make up the next
// batch (up to its limits), and returns each caller's error (a panic comes
// back as an error naming it).
func inOneBatch(t *testing.T, e *etcdkv.Engine, fns ...func(kv.WriteTx) error) []error {
	t.Helper()
	if len(fns) > etcdkv.MaxBatch {
		t.Fatalf("%d functions do not fit in one batch of %d", len(fns), etcdkv.MaxBatch)
	}
	running, held := make(chan struct{}), make(chan struct{})
	holder := make(chan error, 1)
	go func() {
		var once sync.Once
		holder <- e.Update(context.Background(), func(tx kv.WriteTx) error {
			once.Do(func() { close(running) })
			<-held
			return nil
		})
	}()
	<-running
	released := false
	defer func() {
		if !released {
			close(held) // let the committer go when the test fails
		}
	}()
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Go(func() {
			defer func() {
				if p := recover(); p != nil {
					errs[i] = fmt.Errorf("panic: %v", p)
				}
			}()
			errs[i] = e.Update(context.Background(), fn)
		})
	}
	waitFor(t, 10*time.Second, func() bool { return etcdkv.Queued(e) == len(fns) })
	released = true
	close(held)
	wg.Wait()
	if err := <-holder; err != nil {
		t.Fatal(err)
	}
	return errs
}

// TestBatch covers group commit: concurrent Updates of one engine share one
// etcd Txn, each function seeing the writes of those before it.
func TestBatch(t *testing.T) {
	c := etcdtest.Start(t, 1)
	ctx := context.Background()

	t.Run("ConcurrentCreatesDoNotConflict", func(t *testing.T) {
		e := open(t, c)
		const writers, each = 64, 10
		var runs atomic.Int64
		ids := make([][]uint64, writers)
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				for range each {
					var id uint64
					err := e.Update(ctx, func(tx kv.WriteTx) error {
						runs.Add(1) // test bookkeeping: how often functions ran
						n, err := tx.NextSeq("ids")
						if err != nil {
							return err
						}
						id = n
						return tx.Put(fmt.Appendf(nil, "rec/%05d", n), []byte("v"))
					})
					if err != nil {
						t.Error(err)
						return
					}
					ids[w] = append(ids[w], id)
				}
			})
		}
		wg.Wait()
		all := slices.Sorted(slices.Values(slices.Concat(ids...)))
		for i, id := range all {
			if id != uint64(i+1) {
				t.Fatalf("ids handed out: %v, want 1..%d each once", all, writers*each)
			}
		}
		// Each function runs at most twice: once to prefetch its reads, once
		// in its batch; a conflict would run a batch again.
		if got := runs.Load(); got < writers*each || got > 2*writers*each || etcdkv.Reruns(e) != 0 {
			t.Errorf("update functions ran %d times for %d creates, %d batches again: creates of one process conflicted", got, writers*each, etcdkv.Reruns(e))
		}
		var n int
		e.View(ctx, func(tx kv.ReadTx) (err error) { n, err = tx.Count([]byte("rec/")); return err })
		if n != writers*each {
			t.Errorf("%d records, want %d", n, writers*each)
		}
	})

	t.Run("FailingFunctionIsUndoneAlone", func(t *testing.T) {
		e := open(t, c)
		boom := errors.New("boom")
		create := func(name string) func(kv.WriteTx) error {
			return func(tx kv.WriteTx) error {
				id, err := tx.NextSeq("ids")
				if err != nil {
					return err
				}
				if err := tx.Put([]byte("rec/"+name), fmt.Append(nil, id)); err != nil {
					return err
				}
				return tx.Put([]byte("last"), []byte(name))
			}
		}
		fails := func(name string, how func() error) func(kv.WriteTx) error {
			return func(tx kv.WriteTx) error {
				if err := create(name)(tx); err != nil {
					return err
				}
				tx.Delete([]byte("rec/a"))
				return how()
			}
		}
		errs := inOneBatch(t, e,
			create("a"),
			fails("b", func() error { return boom }),
			create("c"),
			fails("d", func() error { panic("d panics") }),
			create("f"),
		)
		for i, want := range []string{"", "boom", "", "panic: d panics", ""} {
			got := ""
			if errs[i] != nil {
				got = errs[i].Error()
			}
			if got != want {
				t.Errorf("caller %d: %q, want %q", i, got, want)
			}
		}
		// a, c, f committed together with ids 1..3; b and d left nothing,
		// not even the ids they took or their delete of rec/a.
		var recs []string
		e.View(ctx, func(tx kv.ReadTx) error {
			return tx.Scan([]byte("rec/"), nil, func(k, v []byte) error {
				recs = append(recs, string(k)+"="+string(v))
				return nil
			})
		})
		slices.Sort(recs)
		ids := strings.Join(recs, " ")
		for _, name := range []string{"b", "d"} {
			if strings.Contains(ids, "rec/"+name) {
				t.Errorf("records %s: the failed function %s wrote", ids, name)
			}
		}
		if len(recs) != 3 || !strings.Contains(ids, "rec/a=") || !strings.Contains(ids, "rec/c=") || !strings.Contains(ids, "rec/f=") {
			t.Fatalf("records %s, want a, c and f", ids)
		}
		var got []string
		for _, r := range recs {
			got = append(got, r[strings.IndexByte(r, '=')+1:])
		}
		slices.Sort(got)
		if strings.Join(got, ",") != "1,2,3" {
			t.Errorf("ids of the committed records %v, want 1,2,3 (a failed function hands out nothing)", got)
		}
		if last := get(t, e, "last"); last == "b" || last == "d" || last == "" {
			t.Errorf("last = %q, written by a function that failed", last)
		}
		if revs := modRevs(t, c, e, "rec/a", "rec/c", "rec/f"); revs[0] != revs[1] || revs[1] != revs[2] {
			t.Errorf("revisions of a, c, f: %v, want one Txn", revs)
		}
	})

	t.Run("BatchCutAtTheOperationLimit", func(t *testing.T) {
		e := open(t, c)
		// Ten functions of 20 puts: 6 fit in 128 operations, the 7th is cut
		// and leads the next batch.
		const fns, puts = 10, 20
		var batch []func(kv.WriteTx) error
		for f := range fns {
			batch = append(batch, func(tx kv.WriteTx) error {
				for i := range puts {
					if err := tx.Put(fmt.Appendf(nil, "f%d/%02d", f, i), nil); err != nil {
						return err
					}
				}
				return nil
			})
		}
		for i, err := range inOneBatch(t, e, batch...) {
			if err != nil {
				t.Errorf("function %d: %v", i, err)
			}
		}
		perRev := map[int64]int{}
		for f := range fns {
			var keys []string
			for i := range puts {
				keys = append(keys, fmt.Sprintf("f%d/%02d", f, i))
			}
			revs := modRevs(t, c, e, keys...)
			if slices.Min(revs) != slices.Max(revs) {
				t.Errorf("function %d committed in more than one Txn: %v", f, revs)
			}
			perRev[revs[0]]++
		}
		sizes := slices.Sorted(maps.Values(perRev))
		if !slices.Equal(sizes, []int{4, 6}) {
			t.Errorf("functions per Txn %v, want [4 6] (a batch holds what fits in 128 operations)", sizes)
		}
	})

	t.Run("TooLargeFailsAlone", func(t *testing.T) {
		e := open(t, c)
		small := func(k string) func(kv.WriteTx) error {
			return func(tx kv.WriteTx) error { return tx.Put([]byte(k), []byte("v")) }
		}
		errs := inOneBatch(t, e, small("s1"), func(tx kv.WriteTx) error {
			for i := range 200 {
				if err := tx.Put(fmt.Appendf(nil, "big/%03d", i), nil); err != nil {
					return err
				}
			}
			return nil
		}, small("s2"))
		if errs[0] != nil || errs[2] != nil {
			t.Errorf("small writes beside a too large one: %v, %v", errs[0], errs[2])
		}
		if !errors.Is(errs[1], kv.ErrTooLarge) || !strings.Contains(errs[1].Error(), "--max-txn-ops") {
			t.Errorf("200 puts in a batch: %v, want ErrTooLarge naming --max-txn-ops", errs[1])
		}
		if get(t, e, "s1") != "v" || get(t, e, "s2") != "v" || get(t, e, "big/000") != "" {
			t.Errorf("after the batch: s1 %q, s2 %q, big/000 %q; want v, v and nothing", get(t, e, "s1"), get(t, e, "s2"), get(t, e, "big/000"))
		}
	})

	t.Run("EndedContextIsDroppedFromTheBatch", func(t *testing.T) {
		e := open(t, c)
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		ran := make(chan struct{}, 1)
		running, held := make(chan struct{}), make(chan struct{})
		var release sync.Once
		defer release.Do(func() { close(held) }) // when the test fails early
		go e.Update(ctx, func(tx kv.WriteTx) error {
			select {
			case <-running:
			default:
				close(running)
			}
			<-held
			return nil
		})
		<-running
		results := make(chan error, 2)
		go func() {
			results <- e.Update(cctx, func(tx kv.WriteTx) error {
				ran <- struct{}{}
				return tx.Put([]byte("gone"), []byte("v"))
			})
		}()
		go func() {
			results <- e.Update(ctx, func(tx kv.WriteTx) error { return tx.Put([]byte("kept"), []byte("v")) })
		}()
		waitFor(t, 10*time.Second, func() bool { return etcdkv.Queued(e) == 2 })
		cancel()
		release.Do(func() { close(held) })
		var errs []error
		for range 2 {
			errs = append(errs, <-results)
		}
		if !slices.ContainsFunc(errs, func(err error) bool { return errors.Is(err, context.Canceled) }) || !slices.Contains(errs, nil) {
			t.Errorf("callers got %v, want context.Canceled for the one whose context ended and nil for the other", errs)
		}
		if len(ran) != 0 {
			t.Error("the function of a caller whose context ended ran")
		}
		if get(t, e, "gone") != "" || get(t, e, "kept") != "v" {
			t.Errorf("gone %q, kept %q; want nothing and v", get(t, e, "gone"), get(t, e, "kept"))
		}
	})

	t.Run("PrefetchReadsTogether", func(t *testing.T) {
		// Eight read-modify-writes of eight keys in one batch: their reads
		// are fetched together before the batch runs them in turn, so the
		// serial run reads nothing of etcd.
		e := open(t, c)
		var fns []func(kv.WriteTx) error
		for i := range 8 {
			key := fmt.Appendf(nil, "rmw/%d", i)
			if err := e.Update(ctx, func(tx kv.WriteTx) error { return tx.Put(key, []byte("v")) }); err != nil {
				t.Fatal(err)
			}
			fns = append(fns, func(tx kv.WriteTx) error {
				v, err := tx.Get(key)
				if err != nil {
					return err
				}
				return tx.Put(key, append(v, 'x'))
			})
		}
		before := etcdkv.SerialReads(e)
		for i, err := range inOneBatch(t, e, fns...) {
			if err != nil {
				t.Errorf("function %d: %v", i, err)
			}
		}
		if n := etcdkv.SerialReads(e) - before; n != 0 {
			t.Errorf("the batch's serial run read etcd %d times, want 0 (every read prefetched)", n)
		}
		for i := range 8 {
			if got := get(t, e, fmt.Sprintf("rmw/%d", i)); got != "vx" {
				t.Errorf("rmw/%d = %q, want vx", i, got)
			}
		}
	})

	t.Run("ReplicasNeverLoseAnUpdate", func(t *testing.T) {
		a := open(t, c)
		b := replica(t, c, a)
		const writers, each = 16, 5 // per engine
		var wg sync.WaitGroup
		for w := range 2 * writers {
			e := []*etcdkv.Engine{a, b}[w%2]
			wg.Go(func() {
				for range each {
					err := e.Update(ctx, func(tx kv.WriteTx) error {
						v, err := tx.Get([]byte("n"))
						if err != nil {
							return err
						}
						var n int
						fmt.Sscan(string(v), &n)
						if err := tx.Put([]byte("n"), fmt.Appendf(nil, "%d", n+1)); err != nil {
							return err
						}
						_, err = tx.NextSeq("ids")
						return err
					})
					if err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		want := fmt.Sprint(2 * writers * each)
		if got := get(t, a, "n"); got != want {
			t.Errorf("counter = %s after %s increments from two replicas (lost or doubled updates)", got, want)
		}
		var id uint64
		if err := b.Update(ctx, func(tx kv.WriteTx) (err error) { id, err = tx.NextSeq("ids"); return err }); err != nil {
			t.Fatal(err)
		}
		if want := uint64(2*writers*each + 1); id != want {
			t.Errorf("next id %d, want %d", id, want)
		}
	})
}
