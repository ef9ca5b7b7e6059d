package boltstore

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func TestOpenCreatesFolderBucketsAndVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "s.db")
	db, err := Open(path, 3, []byte("one"), []byte("two"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.View(func(tx *bolt.Tx) error {
		for _, b := range []string{"one", "two", "meta"} {
			if tx.Bucket([]byte(b)) == nil {
				t.Errorf("bucket %s missing", b)
			}
		}
		if v := string(tx.Bucket(metaBucket).Get(schemaVersion)); v != "3" {
			t.Errorf("schema version %q, want 3", v)
		}
		return nil
	})
}

func TestSecondOpenFailsFast(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	db, err := Open(path, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := time.Now()
	_, err = Open(path, 1)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), path) {
		t.Fatalf("second open: %v, want ErrLocked naming the file", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("second open took %v, want under 2 s", d)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	db, err := Open(path, 5)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := Open(path, 4); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("opening a newer schema: %v, want a refusal", err)
	}
}
