package keys

import (
	"context"
	"fmt"
	"log/slog"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/services/management/internal/gatewayapi"
	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

// BenchmarkListKeys10k lists pages of 10 from 10,000 issued keys (a bbolt
// store): the first page and the last, the keys of one API through a
// policy, and a detailed page (issue 26 asks for a page in at most 5 ms).
func BenchmarkListKeys10k(b *testing.B) {
	ctx := context.Background()
	st := openStore(b)
	err := st.Update(ctx, func(tx *store.Tx) error {
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
	ctx := context.Background()
	st := openStore(b)
	i := 0
	for b.Loop() {
		i++
		k := store.IssuedKey{Hash: fmt.Sprintf("%016x", i), Alias: "bench", Policies: []string{"gold"}, Created: time.Now(), Updated: time.Now()}
		if err := st.Update(ctx, func(tx *store.Tx) error { return tx.PutIssuedKey(k) }); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAPIInUse is the check an API delete without ?force=true makes in
// its transaction (on the store's one committer): which policies grant the
// API, then whether an issued key uses it directly or through one of them,
// with 0, 100 and 1,000 policies of 10 APIs each stored.
func BenchmarkAPIInUse(b *testing.B) {
	for _, n := range []int{0, 100, 1000} {
		b.Run(fmt.Sprintf("policies=%d", n), func(b *testing.B) {
			ctx := context.Background()
			st := openStore(b)
			err := st.Update(ctx, func(tx *store.Tx) error {
				for i := range n {
					rights := ""
					for j := range 10 {
						rights += fmt.Sprintf(`,"api%d":{"api_id":"api%d","api_name":"API %d","versions":["Default"],"allowed_urls":[],"limit":null}`, i*10+j, i*10+j, i*10+j)
					}
					dbID := fmt.Sprintf("%024x", i+1)
					doc := fmt.Sprintf(`{"_id":%q,"id":"pol%d","name":"Policy %d","rate":1000,"per":60,"quota_max":-1,"active":true,"tags":[],"access_rights":{%s}}`, dbID, i, i, rights[1:])
					if err := tx.PutDoc(store.Policies, store.Document{DBID: dbID, ID: fmt.Sprintf("pol%d", i), Doc: []byte(doc)}); err != nil {
						return err
					}
				}
				return tx.PutAPI(store.API{ID: "target", DBID: "ffffffffffffffffffffffff", Kind: store.Classic, Name: "Target",
					Doc: []byte(`{"api_id":"target","id":"ffffffffffffffffffffffff","name":"Target"}`)}, store.AnyRevision)
			})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			cpu := processCPU(b)
			for b.Loop() {
				err := st.View(ctx, func(tx *store.Tx) error { return APIInUse(tx, store.API{ID: "target"}) })
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((processCPU(b)-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// processCPU is the user and system CPU time this process has used: on a
// shared machine a steadier figure than the time a check takes.
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
