package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/pkg/binproc"
	"github.com/gatehouse/gatehouse/pkg/kv"
	"github.com/gatehouse/gatehouse/pkg/kv/boltkv"
)

// TestStoreFilesRefused starts the real binaries on store files they must
// not serve (CONTRACT §0, "Store files"): a truncated file, a file whose
// meta pages are overwritten, a store written by a newer schema, and the
// store of another service. Each start must end with a non-zero exit status
// and exactly one output line naming the file and the problem, before any
// line says the service listens: no fault dump, no partial start.
func TestStoreFilesRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binaries")
	}
	bins, err := binproc.Build(filepath.Join("..", "..", "..", ".."), t.TempDir(), []string{"studio", "management"})
	if err != nil {
		t.Fatal(err)
	}
	// storeOf runs svc once on a new store with some records and stops it.
	storeOf := func(t *testing.T, svc string) string {
		t.Helper()
		db := filepath.Join(t.TempDir(), svc+".db")
		p := binproc.Start(t, bins[svc], []string{"--http-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0", "--db", db}, nil, nil, "")
		p.Stop(t, 15*time.Second)
		return db
	}
	for _, tt := range []struct {
		name    string
		svc     string // the binary started on the damaged store
		prepare func(t *testing.T) string
		want    string
	}{
		{"truncated", "studio", func(t *testing.T) string {
			db := storeOf(t, "studio")
			// The two meta pages stay; the pages they point to are gone.
			if err := os.Truncate(db, 3*4096); err != nil {
				t.Fatal(err)
			}
			return db
		}, "truncated"},
		{"meta pages overwritten", "studio", func(t *testing.T) string {
			db := storeOf(t, "studio")
			f, err := os.OpenFile(db, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteAt([]byte(strings.Repeat("garbage!", 1024)), 0); err != nil {
				t.Fatal(err)
			}
			return db
		}, "not a readable bbolt store"},
		{"newer schema", "studio", func(t *testing.T) string {
			db := storeOf(t, "studio")
			e, err := boltkv.Open(db)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			if err := e.Update(context.Background(), func(tx kv.WriteTx) error { return tx.Put(kv.SchemaKey, []byte("99")) }); err != nil {
				t.Fatal(err)
			}
			return db
		}, "newer"},
		{"management's store", "studio", func(t *testing.T) string { return storeOf(t, "management") }, "management's, not studio's"},
		{"studio's store", "management", func(t *testing.T) string { return storeOf(t, "studio") }, "studio's, not management's"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := tt.prepare(t)
			out, code := binproc.RunToExit(t, bins[tt.svc], "--http-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0", "--db", db)
			lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
			if code == 0 || len(lines) != 1 || !strings.Contains(out, db) || !strings.Contains(out, tt.want) {
				t.Errorf("%s on the store: exit status %d and %d lines, want non-zero and one line naming %s and %q:\n%s", tt.svc, code, len(lines), db, tt.want, out)
			}
			t.Logf("%s", out)
			if strings.Contains(out, "listening") || strings.Contains(out, "goroutine") {
				t.Errorf("a partial start or a dump:\n%s", out)
			}
		})
	}
}
