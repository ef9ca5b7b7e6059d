package keys

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gatehouse/gatehouse/pkg/kv/boltkv"
	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

// TestPoliciesGranting: the policies whose access_rights name an API are
// found however the policy writes the API ID (with escapes too), and none
// that names it only elsewhere, or names a longer ID, or another API.
func TestPoliciesGranting(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	docs := map[string]string{ // policy ID -> access_rights
		"plain":      `{"api1":{"api_id":"api1"}}`,
		"escaped":    `{"\u0061pi1":{"api_id":"\u0061pi1"}}`,
		"spaced":     `{ "other" : {} , "api1" : { } }`,
		"last-wins":  `{"api1":{},"api2":{}}`,
		"longer":     `{"api10":{"api_id":"api10"},"xapi1":{}}`,
		"value-only": `{"api2":{"api_id":"api1","name":"api1"}}`,
		"elsewhere":  `{"api2":{}},"name":"api1","tags":["api1"]`,
		"regex":      `{"api3":{"allowed_urls":[{"url":"/a/\\d+"}]}}`,
	}
	err := st.Update(ctx, func(tx *store.Tx) error {
		i := 0
		for id, rights := range docs {
			i++
			dbID := fmt.Sprintf("%024x", i)
			doc := fmt.Sprintf(`{"_id":%q,"id":%q,"access_rights":%s}`, dbID, id, rights)
			if err := tx.PutDoc(store.Policies, store.Document{DBID: dbID, ID: id, Doc: []byte(doc)}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for api, want := range map[string][]string{
		"api1":  {"escaped", "last-wins", "plain", "spaced"},
		"api10": {"longer"},
		"api3":  {"regex"},
		"api4":  nil,
	} {
		var got []string
		err := st.View(ctx, func(tx *store.Tx) error {
			names, err := policiesGranting(tx, api)
			for i := 0; i < len(names); i += 2 {
				got = append(got, names[i])
			}
			return err
		})
		slices.Sort(got)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("policies granting %s: %q (%v), want %q", api, got, err, want)
		}
	}
}

// openStore is a store on a new bbolt file, closed when tb ends.
func openStore(tb testing.TB) *store.Store {
	e, err := boltkv.Open(filepath.Join(tb.TempDir(), "m.db"))
	if err != nil {
		tb.Fatal(err)
	}
	st, err := store.Open(context.Background(), e)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}
