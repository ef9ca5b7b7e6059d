package kv_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gatehouse/gatehouse/pkg/kv"
	"github.com/gatehouse/gatehouse/pkg/kv/boltkv"
)

func TestEnsureSchema(t *testing.T) {
	ctx := context.Background()
	e, err := boltkv.Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var froms []int
	upgrade := func(tx kv.WriteTx, from int) error {
		froms = append(froms, from)
		return tx.Put([]byte("upgraded"), []byte("yes"))
	}
	for _, version := range []int{2, 2, 3} {
		if err := kv.EnsureSchema(ctx, e, "svc", version, upgrade); err != nil {
			t.Fatalf("EnsureSchema(%d): %v", version, err)
		}
	}
	if len(froms) != 2 || froms[0] != 0 || froms[1] != 2 {
		t.Fatalf("upgrade ran from %v, want [0 2]: once per change of version", froms)
	}
	if err := kv.EnsureSchema(ctx, e, "svc", 2, upgrade); !errors.Is(err, kv.ErrNewerSchema) || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("a binary older than the key space: %v, want a refusal", err)
	}
}

func TestEnsureSchemaConcurrentStartsUpgradeOnce(t *testing.T) {
	ctx := context.Background()
	e, err := boltkv.Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var committed atomic.Int32
	done := make(chan error)
	for range 8 {
		go func() {
			ran := false
			err := kv.EnsureSchema(ctx, e, "svc", 1, func(kv.WriteTx, int) error { ran = true; return nil })
			if err == nil && ran {
				committed.Add(1)
			}
			done <- err
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if n := committed.Load(); n != 1 {
		t.Fatalf("%d of 8 concurrent starts upgraded, want 1", n)
	}
}

func TestEnsureSchemaOwner(t *testing.T) {
	ctx := context.Background()
	e, err := boltkv.Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := kv.EnsureSchema(ctx, e, "management", 1, nil); err != nil {
		t.Fatal(err)
	}
	if err := kv.EnsureSchema(ctx, e, "management", 1, nil); err != nil {
		t.Fatalf("the owner again: %v", err)
	}
	ran := false
	err = kv.EnsureSchema(ctx, e, "studio", 0, func(kv.WriteTx, int) error { ran = true; return nil })
	if !errors.Is(err, kv.ErrForeignStore) || !strings.Contains(err.Error(), "management") || ran {
		t.Fatalf("another service on the store: %v (upgrade ran: %v), want ErrForeignStore naming the owner", err, ran)
	}

	// A key space from before owners were recorded is adopted.
	if err := e.Update(ctx, func(tx kv.WriteTx) error { return tx.Delete(kv.OwnerKey) }); err != nil {
		t.Fatal(err)
	}
	if err := kv.EnsureSchema(ctx, e, "studio", 1, nil); err != nil {
		t.Fatalf("an unowned store: %v", err)
	}
	if err := kv.EnsureSchema(ctx, e, "management", 1, nil); !errors.Is(err, kv.ErrForeignStore) {
		t.Fatalf("after studio adopted it: %v", err)
	}
}
