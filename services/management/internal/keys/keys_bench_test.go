package keys

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/pkg/kv/boltkv"
	"github.com/gatehouse/gatehouse/services/management/internal/gatewayapi"
	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

// BenchmarkListKeys10k lists pages of 10 from 10,000 issued keys (a bbolt
// store): the first page and the last, the keys of one API through a
// policy, and a detailed page (issue 26 asks for a page in at most 5 ms).
func BenchmarkListKeys10k(b *testing.B) {
	e, err := boltkv.Open(filepath.Join(b.TempDir(), "m.db"))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	st, err := store.Open(ctx, e)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	err = st.Update(ctx, func(tx *store.Tx) error {
		if err := tx.PutDoc(store.Policies, store.Document{DBID: "0123456789abcdef01234567", ID: "gold",
			Doc: []byte(`{"_id":"0123456789abcdef01234567","id":"gold","access_rights":{"api1":{"api_id":"api1"}}}`)}); err != nil {
			return err
		}
		if err := tx.PutAPI(store.API{ID: "api1", DBID: "0123456789abcdef01234568", Kind: store.Classic, Name: "One",
			Doc: []byte(`{"api_id":"api1","id":"0123456789abcdef01234568","name":"One"}`)}, store.AnyRevision); err != nil {
			return err
		}
		now := time.Now()
		for i := range 10_000 {
			k := store.IssuedKey{Hash: fmt.Sprintf("%016x", uint64(i)*0x9e3779b97f4a7c15), Alias: fmt.Sprintf("dev%d@example.test", i),
				Created: now, Updated: now}
			if i%2 == 0 {
				k.Policies = []string{"gold"}
			} else {
				k.APIs = []string{"api2"}
			}
			if err := tx.PutIssuedKey(k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	gw, _ := gatewayapi.New("http://127.0.0.1:9", "unused") // lists never call the gateway
	s := New(st, gw, slog.New(slog.DiscardHandler))
	for _, c := range []struct {
		name string
		list func() (int, error)
	}{
		{"all/first", func() (int, error) { _, n, err := s.List(ctx, 0, 10); return n, err }},
		{"all/last", func() (int, error) { _, n, err := s.List(ctx, 9_990, 10); return n, err }},
		{"api-through-policy/last", func() (int, error) { _, n, err := s.APIKeys(ctx, "api1", "", 4_990, 10); return n, err }},
		{"detailed/last", func() (int, error) { _, n, err := s.Detailed(ctx, "", 9_990, 10); return n, err }},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if n, err := c.list(); err != nil || n < 5_000 {
					b.Fatalf("%d keys, %v", n, err)
				}
			}
		})
	}
}

// BenchmarkIssuedKeyWrite is the durable write behind every issued key (one
// bbolt transaction with its fsync), the floor under BenchmarkKeyCreate's
// mgmt-extra-ms.
func BenchmarkIssuedKeyWrite(b *testing.B) {
	e, err := boltkv.Open(filepath.Join(b.TempDir(), "m.db"))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	st, err := store.Open(ctx, e)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	i := 0
	for b.Loop() {
		i++
		k := store.IssuedKey{Hash: fmt.Sprintf("%016x", i), Alias: "bench", Policies: []string{"gold"}, Created: time.Now(), Updated: time.Now()}
		if err := st.Update(ctx, func(tx *store.Tx) error { return tx.PutIssuedKey(k) }); err != nil {
			b.Fatal(err)
		}
	}
}
