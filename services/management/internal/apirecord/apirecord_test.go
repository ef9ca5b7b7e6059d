package apirecord_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/pkg/kv/boltkv"
	"github.com/gatehouse/gatehouse/pkg/kv/kvtest"
	"github.com/gatehouse/gatehouse/services/management/internal/apirecord"
	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

var bg = context.Background()

func open(t *testing.T) *store.Store {
	t.Helper()
	e, err := boltkv.Open(filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(bg, kvtest.Twice(e))
	if err != nil {
		e.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Check(bg); err != nil {
			t.Errorf("consistency: %v", err)
		}
		s.Close()
	})
	return s
}

// derive stands for convert.ToClassicWithin: it names the document's
// length, and refuses a document holding "refused".
func derive(doc []byte, _ int) ([]byte, error) {
	if bytes.Contains(doc, []byte("refused")) {
		return nil, errors.New("refused")
	}
	return fmt.Appendf(nil, `{"len":%d}`, len(doc)), nil
}

func oasDoc(id, name string) []byte {
	return []byte(`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{},"x-tyk-api-gateway":{"info":{"id":"` + id + `","name":"` + name + `"}}}`)
}

// TestMakers: the classic maker stamps the IDs and the org id a definition
// lacks and reads name and categories; the OAS maker stamps the db id (and
// an empty info.id) and derives the gateways' definition with the API's IDs
// and is_oas; without a derivation nothing is derived.
func TestMakers(t *testing.T) {
	m := apirecord.New("org0", derive).WithTag("t1")
	c, err := m.Classic(store.API{ID: "c1", DBID: "aaaaaaaaaaaaaaaaaaaaaaaa"}, []byte(`{"name":"Orders #shop","org_id":null}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Kind != store.Classic || c.Name != "Orders #shop" || len(c.Categories) != 1 || c.Categories[0] != "shop" || c.Derived != nil {
		t.Fatalf("classic record: %+v", c)
	}
	for _, want := range []string{`"org_id":"org0"`, `"api_id":"c1"`, `"id":"aaaaaaaaaaaaaaaaaaaaaaaa"`} {
		if !strings.Contains(string(c.Doc), want) {
			t.Errorf("classic definition lacks %s: %s", want, c.Doc)
		}
	}
	o, err := m.OAS(store.API{ID: "o1", DBID: "bbbbbbbbbbbbbbbbbbbbbbbb"}, oasDoc("", "Pets"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"id":"o1"`, `"dbId":"bbbbbbbbbbbbbbbbbbbbbbbb"`} {
		if !bytes.Contains(o.Doc, []byte(want)) {
			t.Errorf("OAS document lacks %s: %s", want, o.Doc)
		}
	}
	wantDerived := fmt.Sprintf(`{"len":%d,"api_id":"o1","id":"bbbbbbbbbbbbbbbbbbbbbbbb","is_oas":true}`, len(o.Doc))
	if o.Kind != store.OAS || o.Name != "Pets" || string(o.Derived) != wantDerived || o.DerivedBy != "t1" || !m.Current(o) {
		t.Fatalf("OAS record: %+v derived %s", o, o.Derived)
	}
	if m.WithTag("t2").Current(o) {
		t.Fatal("another build's derivation reads as current")
	}
	refused, err := m.OAS(store.API{ID: "o2", DBID: "cccccccccccccccccccccccc"}, oasDoc("o2", "refused"))
	if err != nil || refused.Derived != nil || refused.DerivedBy != "t1" {
		t.Fatalf("a document that does not derive keeps none (not tried again): %+v %v", refused, err)
	}
	plain, err := apirecord.New("org0", nil).OAS(store.API{ID: "o3", DBID: "dddddddddddddddddddddddd"}, oasDoc("o3", "P"))
	if err != nil || plain.Derived != nil || plain.DerivedBy != "" {
		t.Fatalf("without derivation: %+v %v", plain, err)
	}
}

// TestRederive: records whose derived definition another build (or no
// derivation) made are rewritten with this build's, outside the write
// transaction; current ones and classic ones are left alone, and a second
// pass rewrites nothing.
func TestRederive(t *testing.T) {
	s := open(t)
	old := apirecord.New("org0", nil)
	for i, id := range []string{"o1", "o2", "o3"} {
		a, err := old.OAS(store.API{ID: id, DBID: fmt.Sprintf("%024x", i+1)}, oasDoc(id, "N"))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.CreateAPI(bg, a); err != nil {
			t.Fatal(err)
		}
	}
	c, _ := old.Classic(store.API{ID: "c", DBID: fmt.Sprintf("%024x", 9)}, []byte(`{"name":"C"}`))
	if err := s.CreateAPI(bg, c); err != nil {
		t.Fatal(err)
	}
	m1 := apirecord.New("org0", derive).WithTag("t1")
	current, _ := s.GetAPI(bg, "o3")
	if err := s.Update(bg, func(tx *store.Tx) error { return tx.PutAPI(m1.Derived(current), current.Revision) }); err != nil {
		t.Fatal(err)
	}
	if n, err := m1.Rederive(bg, s); n != 2 || err != nil {
		t.Fatalf("rederived %d (%v), want o1 and o2", n, err)
	}
	s.View(bg, func(tx *store.Tx) error {
		return tx.EachAPI(func(a store.API) error {
			if a.Kind == store.OAS && (a.DerivedBy != "t1" || !bytes.HasPrefix(a.Derived, []byte(`{"len":`))) {
				t.Errorf("%s: derived by %q: %s", a.ID, a.DerivedBy, a.Derived)
			}
			return nil
		})
	})
	if n, err := m1.Rederive(bg, s); n != 0 || err != nil {
		t.Fatalf("second pass rederived %d (%v)", n, err)
	}
	if n, err := m1.WithTag("t2").Rederive(bg, s); n != 3 || err != nil {
		t.Fatalf("another build rederived %d (%v), want 3", n, err)
	}
}
