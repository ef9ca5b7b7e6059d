package boltkv

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/gatehouse/gatehouse/pkg/kv"
	"github.com/gatehouse/gatehouse/pkg/kv/groupcommit"
	"github.com/gatehouse/gatehouse/pkg/kv/kvtest"
)

var ctx = context.Background()

// openTemp opens an engine in a fresh folder and checks the file at cleanup.
func openTemp(t *testing.T) *Engine {
	t.Helper()
	e, err := Open(filepath.Join(t.TempDir(), "nested", "kv.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Check(); err != nil {
			t.Errorf("consistency check: %v", err)
		}
		if err := e.Close(); err != nil {
			t.Error(err)
		}
	})
	return e
}

func TestConformance(t *testing.T) {
	kvtest.Run(t, func(t *testing.T) kv.Engine { return openTemp(t) })
}

func TestSecondOpenFailsFast(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	e, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	start := time.Now()
	_, err = Open(path)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "in use by another process") {
		t.Fatalf("second open: %v, want ErrLocked naming the file", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("second open took %v, want under 2 s", d)
	}
}

func TestDataSurvivesReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	e, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	err = e.Update(ctx, func(tx kv.WriteTx) error {
		if _, err := tx.NextSeq("n"); err != nil {
			return err
		}
		return tx.Put([]byte("k"), []byte("v"))
	})
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	if err := e.Update(ctx, func(kv.WriteTx) error { return nil }); !errors.Is(err, groupcommit.ErrClosed) {
		t.Fatalf("Update after Close: %v, want groupcommit.ErrClosed", err)
	}
	if err := e.Ready(ctx); !errors.Is(err, kv.ErrUnavailable) {
		t.Fatalf("Ready after Close: %v, want ErrUnavailable", err)
	}
	e = reopen(t, path)
	var v []byte
	var n uint64
	err = e.Update(ctx, func(tx kv.WriteTx) (err error) {
		if v, err = tx.Get([]byte("k")); err != nil {
			return err
		}
		v = slices.Clone(v)
		n, err = tx.NextSeq("n")
		return err
	})
	if err != nil || string(v) != "v" || n != 2 {
		t.Fatalf("after reopen: %q, seq %d, %v; want v, 2", v, n, err)
	}
}

func reopen(t *testing.T, path string) *Engine {
	t.Helper()
	e, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// TestBatchIsolatesFailures runs many concurrent updates, half of which
// write and then fail or panic: the others' writes commit, theirs vanish,
// and each caller gets its own outcome.
func TestBatchIsolatesFailures(t *testing.T) {
	e := openTemp(t)
	put := func(tx kv.WriteTx, i int) error {
		if err := tx.Put(fmt.Appendf(nil, "k/%03d", i), []byte("x")); err != nil {
			return err
		}
		_, err := tx.NextSeq("s")
		return err
	}
	const n = 200
	outcome := make([]any, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			defer func() {
				if p := recover(); p != nil {
					outcome[i] = p
				}
			}()
			outcome[i] = e.Update(ctx, func(tx kv.WriteTx) error {
				if err := put(tx, i); err != nil {
					return err
				}
				switch i % 4 {
				case 1:
					return fmt.Errorf("refused %d", i)
				case 3:
					panic(fmt.Sprintf("panic %d", i))
				}
				return nil
			})
		})
	}
	wg.Wait()
	var want []string
	for i, o := range outcome {
		switch i % 4 {
		case 1:
			if err, _ := o.(error); err == nil || err.Error() != fmt.Sprintf("refused %d", i) {
				t.Errorf("update %d: %v, want its own error", i, o)
			}
		case 3:
			if o != fmt.Sprintf("panic %d", i) {
				t.Errorf("update %d: %v, want its own panic re-raised", i, o)
			}
		default:
			if o != nil && o != error(nil) {
				t.Errorf("update %d: %v, want success", i, o)
			}
			want = append(want, fmt.Sprintf("k/%03d", i))
		}
	}
	var got []string
	var seq uint64
	err := e.Update(ctx, func(tx kv.WriteTx) (err error) {
		got = nil
		if err := tx.Scan([]byte("k/"), nil, func(k, _ []byte) error { got = append(got, string(k)); return nil }); err != nil {
			return err
		}
		seq, err = tx.NextSeq("s")
		return err
	})
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("keys after the batch: %q (%v), want %q", got, err, want)
	}
	if seq != uint64(len(want)+1) {
		t.Fatalf("sequence after %d successful updates: next %d, want %d (failed ones hand out nothing)", len(want), seq, len(want)+1)
	}
}

// TestUndoRestoresEachKey: a function that writes a key several times
// (empty values among them) and then fails leaves every key as it was, and
// a key put with an empty value can be deleted in the same transaction.
func TestUndoRestoresEachKey(t *testing.T) {
	e := openTemp(t)
	write := func(tx kv.WriteTx, steps ...string) error { // "put key value", "del key"
		for _, s := range steps {
			f := strings.Split(s, " ")
			var err error
			if f[0] == "del" {
				err = tx.Delete([]byte(f[1]))
			} else {
				var v []byte // nil when empty, as the stores put index entries
				if len(f) > 2 {
					v = []byte(f[2])
				}
				err = tx.Put([]byte(f[1]), v)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	state := func() []string {
		var got []string
		err := e.View(ctx, func(tx kv.ReadTx) error {
			return tx.Scan([]byte("k/"), nil, func(k, v []byte) error { got = append(got, string(k)+"="+string(v)); return nil })
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if err := e.Update(ctx, func(tx kv.WriteTx) error {
		return write(tx, "put k/1 one", "put k/e", "put k/z", "del k/z")
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{"k/1=one", "k/e="}
	if got := state(); !slices.Equal(got, want) {
		t.Fatalf("after the first update: %q, want %q (k/z put empty and deleted)", got, want)
	}
	failed := errors.New("refused")
	err := e.Update(ctx, func(tx kv.WriteTx) error {
		if err := write(tx, "put k/1 a", "put k/1 b", "del k/1", "put k/1 c",
			"put k/e x", "del k/e", "put k/n", "del k/n", "put k/n y", "del k/absent"); err != nil {
			return err
		}
		return failed
	})
	if !errors.Is(err, failed) {
		t.Fatalf("failing update: %v, want %v", err, failed)
	}
	if got := state(); !slices.Equal(got, want) {
		t.Fatalf("after a failed update: %q, want %q", got, want)
	}
	// The journal keeps its own copy of each key (in a buffer the committer
	// keeps from one commit to the next): a caller may write many keys from
	// one buffer it reuses, and the undo still finds each.
	for round := range 3 {
		err := e.Update(ctx, func(tx kv.WriteTx) error {
			k := []byte("k/1")
			for i := range 3000 {
				k = fmt.Appendf(k[:0], "k/%d", i%1500)
				if err := tx.Put(k, []byte("v")); err != nil {
					return err
				}
				if i%3 == 0 {
					if err := tx.Delete(k); err != nil {
						return err
					}
				}
			}
			return failed
		})
		if !errors.Is(err, failed) {
			t.Fatalf("round %d: %v, want %v", round, err, failed)
		}
		if got := state(); !slices.Equal(got, want) {
			t.Fatalf("round %d, after a failed update of 3,000 writes: %d keys, want %q", round, len(got), want)
		}
	}
}

// TestLegacyLayoutMovesUnderPrefix: a file of the bucket-per-kind layout is
// converted on open, sequences kept.
func TestLegacyLayoutMovesUnderPrefix(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for name, pairs := range map[string][]string{"meta": {"schema_version", "1"}, "things": {"\x00\x00\x00\x01", "a", "\x00\x00\x00\x03", "c"}} {
			b, err := tx.CreateBucket([]byte(name))
			if err != nil {
				return err
			}
			for i := 0; i < len(pairs); i += 2 {
				if err := b.Put([]byte(pairs[i]), []byte(pairs[i+1])); err != nil {
					return err
				}
			}
		}
		return tx.Bucket([]byte("things")).SetSequence(7)
	})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()

	e := reopen(t, path)
	var got []string
	var next uint64
	err = e.Update(ctx, func(tx kv.WriteTx) (err error) {
		got = nil
		if err := tx.Scan(nil, nil, func(k, v []byte) error { got = append(got, fmt.Sprintf("%q=%s", k, v)); return nil }); err != nil {
			return err
		}
		next, err = tx.NextSeq("things")
		return err
	})
	want := []string{`"legacy/meta/schema_version"=1`, `"legacy/things/\x00\x00\x00\x01"=a`, `"legacy/things/\x00\x00\x00\x03"=c`}
	if err != nil || !slices.Equal(got, want) || next != 8 {
		t.Fatalf("after opening a legacy file: %q, next id %d, %v; want %q, 8", got, next, err, want)
	}
	if err := e.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestCloseCommitsWhatIsQueued(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	e, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	acked := map[string]bool{}
	for i := range 64 {
		wg.Go(func() {
			k := fmt.Sprintf("k%02d", i)
			if err := e.Update(ctx, func(tx kv.WriteTx) error { return tx.Put([]byte(k), []byte("v")) }); err == nil {
				mu.Lock()
				acked[k] = true
				mu.Unlock()
			}
		})
	}
	e.Close()
	wg.Wait()
	e = reopen(t, path)
	for k := range acked {
		var v []byte
		e.View(ctx, func(tx kv.ReadTx) (err error) { v, err = tx.Get([]byte(k)); v = slices.Clone(v); return err })
		if v == nil {
			t.Errorf("%s was acknowledged but is missing after Close and reopen", k)
		}
	}
}

// TestCommitted: the committed revision is the one a View opened then
// reads, moves with every commit before its caller is answered, and is
// unknown once the engine is closed.
func TestCommitted(t *testing.T) {
	e, err := Open(filepath.Join(t.TempDir(), "kv.db"))
	if err != nil {
		t.Fatal(err)
	}
	viewed := func() int64 {
		var rev int64
		if err := e.View(context.Background(), func(r kv.ReadTx) error { rev, _ = kv.RevisionOf(r); return nil }); err != nil {
			t.Fatal(err)
		}
		return rev
	}
	last := int64(-1)
	for i := range 3 {
		rev, ok := kv.CommittedOf(e)
		if !ok || rev != viewed() || rev == last {
			t.Fatalf("round %d: committed %d (%v), a View reads %d, the last round's %d", i, rev, ok, viewed(), last)
		}
		last = rev
		if err := e.Update(context.Background(), func(w kv.WriteTx) error { return w.Put([]byte(fmt.Sprint("k", i)), []byte("v")) }); err != nil {
			t.Fatal(err)
		}
	}
	e.Close()
	if _, ok := kv.CommittedOf(e); ok {
		t.Fatal("a closed engine names a committed revision")
	}
}
