package etcdkv_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/gatehouse/gatehouse/pkg/kv"
	"github.com/gatehouse/gatehouse/pkg/kv/etcdkv"
	"github.com/gatehouse/gatehouse/pkg/kv/etcdkv/etcdtest"
)

// TestWatchCache: Views answer from the watch cache and still see every
// write acknowledged before them, on the replica that wrote and on another.
func TestWatchCache(t *testing.T) {
	t.Parallel()
	c := etcdtest.Start(t, 1)
	a := open(t, c)
	b := replica(t, c, a)
	other := open(t, c) // writes elsewhere in etcd move the revision too

	t.Run("ReadsAfterWrites", func(t *testing.T) {
		for i := range 200 {
			want := strconv.Itoa(i)
			put(t, a, "k", want)
			if i%3 == 0 {
				put(t, other, "x", want) // a revision the cache's watch never sees
			}
			if got := get(t, b, "k"); got != want {
				t.Fatalf("write %d: replica read %q", i, got)
			}
			if got := get(t, a, "k"); got != want {
				t.Fatalf("write %d: writer read %q", i, got)
			}
		}
		del(t, a, "k")
		if got := get(t, b, "k"); got != "" {
			t.Fatalf("after delete: replica read %q", got)
		}
		if n := etcdkv.CacheMisses(a) + etcdkv.CacheMisses(b); n > 5 {
			t.Errorf("%d of 800 Views read etcd instead of the cache", n)
		}
	})

	t.Run("ScanAndCount", func(t *testing.T) {
		put(t, a, "s/1", "a", "s/2", "b", "s/3", "c", "t/1", "x", "s", "root")
		del(t, a, "s/2")
		err := b.View(context.Background(), func(tx kv.ReadTx) error {
			if got := fmt.Sprint(scan(t, tx, "s/", "")); got != "[s/1=a s/3=c]" {
				t.Errorf("scan s/: %s", got)
			}
			if got := fmt.Sprint(scan(t, tx, "s/", "s/2")); got != "[s/3=c]" {
				t.Errorf("scan s/ from s/2: %s", got)
			}
			if got := fmt.Sprint(scan(t, tx, "", "t")); got != "[t/1=x]" {
				t.Errorf("scan from t: %s", got)
			}
			n, err := tx.Count([]byte("s/"))
			if n != 2 || err != nil {
				t.Errorf("count s/: %d, %v", n, err)
			}
			stopped := 0
			err = tx.Scan([]byte("s"), nil, func(_, _ []byte) error { stopped++; return kv.ErrStop })
			if stopped != 1 || err != nil {
				t.Errorf("ErrStop: %d calls, %v", stopped, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})

	t.Run("SnapshotStaysFixed", func(t *testing.T) {
		put(t, a, "f", "before")
		err := b.View(context.Background(), func(tx kv.ReadTx) error {
			meanwhile(func() { put(t, a, "f", "after", "g", "new") })
			v, _ := tx.Get([]byte("f"))
			g, _ := tx.Get([]byte("g"))
			if string(v) != "before" || g != nil {
				t.Errorf("a View saw a later write: f=%q g=%q", v, g)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := get(t, b, "f"); got != "after" {
			t.Errorf("next View: f=%q", got)
		}
	})
}

// TestWatchCacheUnavailable: without a quorum a View fails as before
// (kv.ErrUnavailable) instead of answering from a cache that may be stale.
func TestWatchCacheUnavailable(t *testing.T) {
	t.Parallel()
	c := etcdtest.Start(t, 3)
	e := open(t, c)
	put(t, e, "k", "v")
	if got := get(t, e, "k"); got != "v" {
		t.Fatalf("got %q", got)
	}
	leader := c.Leader()
	for i := range 3 {
		if i != leader {
			c.Stop(i)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := e.View(ctx, func(tx kv.ReadTx) error { _, err := tx.Get([]byte("k")); return err })
	if err == nil {
		t.Fatal("a View without quorum answered")
	}
	for i := range 3 {
		if i != leader {
			c.Restart(i)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var v []byte
		err := e.View(context.Background(), func(tx kv.ReadTx) error {
			got, err := tx.Get([]byte("k"))
			v = append([]byte(nil), got...)
			return err
		})
		if err == nil && string(v) == "v" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no recovery: %q, %v", v, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// registerOp is one operation of the linearizability history: a Put of value
// or a Get that returned value ("" for absent), on one key.
type registerOp struct {
	key   string
	put   bool
	value string
}

// registerModel is a map of registers, partitioned by key.
var registerModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		for _, op := range history {
			k := op.Input.(registerOp).key
			byKey[k] = append(byKey[k], op)
		}
		var out [][]porcupine.Operation
		for _, ops := range byKey {
			out = append(out, ops)
		}
		return out
	},
	Init: func() any { return "" },
	Step: func(state, input, output any) (bool, any) {
		in := input.(registerOp)
		if in.put {
			return true, in.value
		}
		return output.(string) == state.(string), state
	},
	Equal: func(a, b any) bool { return a == b },
	DescribeOperation: func(input, output any) string {
		in := input.(registerOp)
		if in.put {
			return fmt.Sprintf("put(%s, %s)", in.key, in.value)
		}
		return fmt.Sprintf("get(%s) -> %q", in.key, output)
	},
}

// TestWatchCacheLinearizable runs Puts and Gets on two replicas at once and
// checks the history with porcupine: every Get returns a value some
// linearization of the history allows (no stale read from either cache).
func TestWatchCacheLinearizable(t *testing.T) {
	t.Parallel()
	c := etcdtest.Start(t, 1)
	a := open(t, c)
	b := replica(t, c, a)
	replicas := []*etcdkv.Engine{a, b}
	var (
		mu      sync.Mutex
		history []porcupine.Operation
		seq     int
	)
	start := time.Now()
	var wg sync.WaitGroup
	for client := range 8 {
		wg.Go(func() {
			e := replicas[client%2]
			rnd := rand.New(rand.NewPCG(uint64(client), 7))
			for i := range 150 {
				key := "r" + strconv.Itoa(rnd.IntN(3))
				op := registerOp{key: key, put: rnd.IntN(3) == 0}
				var out string
				call := time.Since(start).Nanoseconds()
				var err error
				if op.put {
					mu.Lock()
					seq++
					op.value = fmt.Sprintf("%d.%d.%d", client, i, seq)
					mu.Unlock()
					err = e.Update(context.Background(), func(tx kv.WriteTx) error {
						return tx.Put([]byte(key), []byte(op.value))
					})
				} else {
					err = e.View(context.Background(), func(tx kv.ReadTx) error {
						v, err := tx.Get([]byte(key))
						out = string(v)
						return err
					})
				}
				ret := time.Since(start).Nanoseconds()
				if err != nil {
					t.Errorf("client %d: %v", client, err)
					return
				}
				mu.Lock()
				history = append(history, porcupine.Operation{ClientId: client, Input: op, Call: call, Output: out, Return: ret})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	res, _ := porcupine.CheckOperationsVerbose(registerModel, history, 30*time.Second)
	if res != porcupine.Ok {
		t.Fatalf("history of %d operations over two replicas: %v (not linearizable)", len(history), res)
	}
}

// TestWatchCacheRecent: a View under kv.Recent(ctx, d) sees every write
// acknowledged more than d before it, on another replica, and once a
// linearizable View of that replica saw a write every Recent View there
// does too; it reads etcd's revision about once per d, not per View.
func TestWatchCacheRecent(t *testing.T) {
	t.Parallel()
	c := etcdtest.Start(t, 1)
	a := open(t, c)
	b := replica(t, c, a)
	const within = 200 * time.Millisecond
	recent := func() string {
		var v string
		err := b.View(kv.Recent(context.Background(), within), func(tx kv.ReadTx) error {
			got, err := tx.Get([]byte("k"))
			v = string(got)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	before := etcdkv.RevisionReads(b)
	start := time.Now()
	views := 0
	for i := range 10 {
		want := strconv.Itoa(i)
		put(t, a, "k", want)
		acked := time.Now()
		for time.Since(acked) < 2*within {
			began := time.Since(acked)
			got := recent()
			views++
			if got != want && began > within {
				t.Fatalf("write %s acknowledged %v before a Recent View: it read %q", want, began, got)
			}
			time.Sleep(time.Millisecond)
		}
	}
	reads, elapsed := etcdkv.RevisionReads(b)-before, time.Since(start)
	if limit := int64(elapsed/within) + 5; reads > limit {
		t.Errorf("%d Recent Views over %v read etcd's revision %d times, want at most %d", views, elapsed.Round(time.Millisecond), reads, limit)
	}
	t.Logf("%d Recent Views over %v: %d revision reads", views, elapsed.Round(time.Millisecond), reads)

	// A linearizable View that saw a write: the Recent Views after it see it.
	for i := range 20 {
		want := "l" + strconv.Itoa(i)
		put(t, a, "k", want)
		if got := get(t, b, "k"); got != want {
			t.Fatalf("linearizable View read %q, want %q", got, want)
		}
		if got := recent(); got != want {
			t.Fatalf("a Recent View after a linearizable one read %q, want %q", got, want)
		}
	}
}
