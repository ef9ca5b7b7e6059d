package store

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/gatehouse/gatehouse/pkg/kv"
	"github.com/gatehouse/gatehouse/pkg/kv/boltkv"
)

// viewCounter counts the engine's read transactions; it decorates the
// engine as kvobserve and the audit log do (Unwrap).
type viewCounter struct {
	kv.Engine
	views atomic.Int64
}

func (e *viewCounter) View(ctx context.Context, fn func(kv.ReadTx) error) error {
	e.views.Add(1)
	return e.Engine.View(ctx, fn)
}

func (e *viewCounter) Unwrap() kv.Engine { return e.Engine }

// TestAnswersWithoutTransaction: on bbolt (kv.Committed), a caller lookup
// and the category counts are answered without a read transaction while
// nothing is committed, and read afresh after any commit: a deactivation,
// a new key and a deletion are seen by the next lookup.
func TestAnswersWithoutTransaction(t *testing.T) {
	ctx := context.Background()
	e, err := boltkv.Open(filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	counted := &viewCounter{Engine: e}
	s, err := Open(ctx, counted)
	if err != nil {
		e.Close()
		t.Fatal(err)
	}
	defer s.Close()
	u, err := s.CreateUser(ctx, User{Email: "c@x.test", KeyHash: []byte("hc"), Permissions: map[string]string{"apis": "read"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Update(ctx, func(tx *Tx) error { return tx.PutAPI(classic("a1", db(1), "A #team"), AnyRevision) }); err != nil {
		t.Fatal(err)
	}
	lookups := func(n int, hash string) (User, error) {
		t.Helper()
		var u User
		var err error
		for range n {
			u, err = s.UserByKeyHash(ctx, []byte(hash))
		}
		return u, err
	}
	before := counted.views.Load()
	if got, err := lookups(5, "hc"); err != nil || got.ID != u.ID || got.Inactive {
		t.Fatalf("lookup: %+v, %v", got, err)
	}
	for range 5 {
		if cats, err := s.CategoryCounts(ctx); err != nil || len(cats) != 1 || cats[0].Count != 1 {
			t.Fatalf("counts: %v, %v", cats, err)
		}
	}
	if n := counted.views.Load() - before; n != 2 {
		t.Errorf("5 lookups and 5 counts with nothing committed opened %d read transactions, want 2", n)
	}

	if _, err := s.UpdateUser(ctx, u.ID, func(u *User) error { u.Inactive = true; return nil }); err != nil {
		t.Fatal(err)
	}
	if got, err := lookups(1, "hc"); err != nil || !got.Inactive {
		t.Fatalf("after a deactivation: %+v, %v; want inactive", got, err)
	}
	if _, err := s.UpdateUser(ctx, u.ID, func(u *User) error { u.Inactive, u.KeyHash = false, []byte("hd"); return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := lookups(1, "hc"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the old key after a new one: %v, want ErrNotFound", err)
	}
	if got, err := lookups(2, "hd"); err != nil || got.ID != u.ID || got.Inactive {
		t.Fatalf("the new key: %+v, %v", got, err)
	}
	if err := s.Update(ctx, func(tx *Tx) error { return tx.PutAPI(classic("a2", db(2), "B #team"), AnyRevision) }); err != nil {
		t.Fatal(err)
	}
	if cats, err := s.CategoryCounts(ctx); err != nil || len(cats) != 1 || cats[0].Count != 2 {
		t.Fatalf("counts after a new API: %v, %v", cats, err)
	}
	if err := s.DeleteUser(ctx, u.ID, func(User) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := lookups(1, "hd"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after a deletion: %v, want ErrNotFound", err)
	}
	s.Close()
	if _, err := lookups(1, "hd"); err == nil {
		t.Fatal("a lookup after Close succeeded")
	}
}
