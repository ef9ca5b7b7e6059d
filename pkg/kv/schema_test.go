package kv_test

import (
	"context"
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
		if err := kv.EnsureSchema(ctx, e, version, upgrade); err != nil {
			t.Fatalf("EnsureSchema(%d): %v", version, err)
		}
	}
	if len(froms) != 2 || froms[0] != 0 || froms[1] != 2 {
		t.Fatalf("upgrade ran from %v, want [0 2]: once per change of version", froms)
	}
	if err := kv.EnsureSchema(ctx, e, 2, upgrade); err == nil || !strings.Contains(err.Error(), "newer") {
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
			err := kv.EnsureSchema(ctx, e, 1, func(kv.WriteTx, int) error { ran = true; return nil })
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
