package boltkv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/gatehouse/gatehouse/pkg/kv"
)

// damagedStore writes a store of many pages, closes it and lets damage
// change the file, given the bytes its pages use.
func damagedStore(t *testing.T, damage func(path string, size int64)) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.db")
	e, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		err := e.Update(context.Background(), func(tx kv.WriteTx) error {
			return tx.Put(fmt.Appendf(nil, "k%04d", i), []byte(strings.Repeat("v", 1000)))
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	// The file grows in large steps: the pages in use end well before it.
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var used int64
	db.View(func(tx *bolt.Tx) error { used = tx.Size(); return nil })
	db.Close()
	damage(path, used)
	return path
}

// TestDamagedFilesRefused: a truncated, emptied, overwritten or garbage file
// is refused by Open with ErrDamaged and a message naming the file, instead
// of a fault on the first read past its end (CONTRACT §0, "Store files").
func TestDamagedFilesRefused(t *testing.T) {
	write := func(path string, off int64, b []byte) {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteAt(b, off); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name   string
		damage func(path string, size int64)
		want   string
	}{
		{"truncated to half", func(p string, size int64) { os.Truncate(p, size/2) }, "truncated"},
		{"truncated by one page", func(p string, size int64) { os.Truncate(p, size-4096) }, "truncated"},
		{"emptied", func(p string, _ int64) { os.Truncate(p, 0) }, "empty"},
		{"meta pages overwritten", func(p string, _ int64) { write(p, 0, make([]byte, 8192)) }, "not a readable bbolt store"},
		{"not bbolt at all", func(p string, _ int64) { os.WriteFile(p, []byte(strings.Repeat("not a database\n", 1000)), 0o600) }, "not a readable bbolt store"},
		{"a data page zeroed", func(p string, size int64) { write(p, 4*4096, make([]byte, 4096)) }, "corrupt"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := damagedStore(t, tt.damage)
			e, err := Open(path)
			if err == nil {
				e.Close()
				t.Fatal("opened a damaged file")
			}
			if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Open: %v; want ErrDamaged naming %s and %q", err, path, tt.want)
			}
		})
	}
}

func TestIntactFileOpens(t *testing.T) {
	path := damagedStore(t, func(string, int64) {})
	e, err := Open(path)
	if err != nil {
		t.Fatalf("an intact file: %v", err)
	}
	e.Close()
}

// BenchmarkVerify is the check Open runs on an existing file before opening
// it for writing, on a store of 100 MiB (25,600 values of 4 KiB).
func BenchmarkVerify(b *testing.B) {
	path := filepath.Join(b.TempDir(), "s.db")
	e, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	value := []byte(strings.Repeat("v", 4096))
	for batch := range 100 {
		err := e.Update(context.Background(), func(tx kv.WriteTx) error {
			for i := range 256 {
				if err := tx.Put(fmt.Appendf(nil, "k%03d-%03d", batch, i), value); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if err := verify(path); err != nil {
			b.Fatal(err)
		}
	}
}
