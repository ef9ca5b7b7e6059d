package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/pkg/kv"
)

// TestIssuedKeys: a key's record and its API and policy index entries
// move together on replace and go on delete; counts, per-API hashes and
// pages read them; the indexes stay consistent (Check).
func TestIssuedKeys(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	update := func(fn func(tx *Tx) error) {
		t.Helper()
		if err := s.Update(ctx, fn); err != nil {
			t.Fatal(err)
		}
		if err := s.Check(ctx); err != nil {
			t.Fatal(err)
		}
	}
	update(func(tx *Tx) error {
		for _, k := range []IssuedKey{
			{Hash: "aaaa0001", Alias: "ana", APIs: []string{"api1", "api2"}, Created: now, Updated: now},
			{Hash: "aaaa0002", Policies: []string{"gold"}, Created: now, Updated: now},
			{Hash: "aaaa0003", APIs: []string{"api1"}, Policies: []string{"gold", "silver"}, Created: now, Updated: now},
		} {
			if err := tx.PutIssuedKey(k); err != nil {
				return err
			}
		}
		return nil
	})
	count := func(api, policy string) (int, int) {
		var a, p int
		s.View(ctx, func(tx *Tx) (err error) {
			if a, err = tx.KeysUsingAPI(api); err != nil {
				return err
			}
			p, err = tx.KeysUsingPolicy(policy)
			return err
		})
		return a, p
	}
	if a, p := count("api1", "gold"); a != 2 || p != 2 {
		t.Fatalf("api1 %d, gold %d; want 2 and 2", a, p)
	}
	var hashes []string
	s.View(ctx, func(tx *Tx) (err error) {
		return tx.EachKeyHashByAPI("api2", []string{"gold", "silver"}, func(h string) error {
			hashes = append(hashes, h)
			return nil
		})
	})
	if !slices.Equal(hashes, []string{"aaaa0001", "aaaa0002", "aaaa0003"}) {
		t.Fatalf("api2 or gold or silver: %v", hashes)
	}

	// replaced: the old index entries go, the new come
	update(func(tx *Tx) error {
		return tx.PutIssuedKey(IssuedKey{Hash: "aaaa0001", Alias: "ana", Policies: []string{"silver"}, Created: now, Updated: now})
	})
	if a, p := count("api1", "silver"); a != 1 || p != 2 {
		t.Fatalf("after the replace: api1 %d, silver %d; want 1 and 2", a, p)
	}
	page, total, err := s.IssuedKeys(ctx, 1, 1)
	if err != nil || total != 3 || len(page) != 1 || page[0].Hash != "aaaa0002" || !page[0].Created.Equal(now) {
		t.Fatalf("page 2 of 1: %+v %d %v", page, total, err)
	}
	update(func(tx *Tx) error { return tx.DeleteIssuedKey("aaaa0003") })
	if a, p := count("api1", "gold"); a != 0 || p != 1 {
		t.Fatalf("after the delete: api1 %d, gold %d; want 0 and 1", a, p)
	}
	s.View(ctx, func(tx *Tx) error {
		if _, err := tx.IssuedKey("aaaa0003"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("deleted record: %v", err)
		}
		return nil
	})
	if hs, n, err := s.IssuedKeyHashes(ctx, 0, -1); err != nil || n != 2 || !slices.Equal(hs, []string{"aaaa0001", "aaaa0002"}) {
		t.Fatalf("all hashes: %v %d %v", hs, n, err)
	}
}

// TestEachKeyHashByAPI: the merge of the API's range and its policies'
// ranges crosses their chunks and gives each hash once, in order.
func TestEachKeyHashByAPI(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	now := time.Now()
	var want []string
	for i := range 1000 {
		if i%4 != 3 {
			want = append(want, fmt.Sprintf("%08x", i))
		}
	}
	err := s.Update(ctx, func(tx *Tx) error {
		for i := range 1000 {
			k := IssuedKey{Hash: fmt.Sprintf("%08x", i), Created: now, Updated: now}
			switch i % 4 {
			case 0:
				k.APIs = []string{"api"}
			case 1:
				k.Policies = []string{"gold"}
			case 2:
				k.APIs, k.Policies = []string{"api"}, []string{"gold", "silver"}
			case 3:
				k.APIs = []string{"other"}
			}
			if err := tx.PutIssuedKey(k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	err = s.View(ctx, func(tx *Tx) error {
		return tx.EachKeyHashByAPI("api", []string{"gold", "silver", "none"}, func(h string) error {
			got = append(got, h)
			return nil
		})
	})
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("%d hashes (%v), want %d in order once each", len(got), err, len(want))
	}
	n := 0
	s.View(ctx, func(tx *Tx) error {
		return tx.EachKeyHashByAPI("api", []string{"gold"}, func(string) error {
			if n++; n == 10 {
				return kv.ErrStop
			}
			return nil
		})
	})
	if n != 10 {
		t.Fatalf("stopped after %d, want 10", n)
	}
}
