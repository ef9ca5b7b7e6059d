package gateways

import (
	"bytes"
	"testing"

	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

func TestDerivedCache(t *testing.T) {
	var c derivedCache
	a := store.API{ID: "a", Revision: 1, Doc: []byte(`{"x":1}`)}
	if _, ok := c.get(a); ok {
		t.Fatal("empty cache answered")
	}
	c.put(a, []byte("one"))
	if def, ok := c.get(a); !ok || string(def) != "one" {
		t.Fatalf("get after put: %q %v", def, ok)
	}
	for _, other := range []store.API{
		{ID: "a", Revision: 2, Doc: a.Doc},        // a later write
		{ID: "b", Revision: 1, Doc: a.Doc},        // another API
		{ID: "a", Revision: 1, Doc: []byte(`{}`)}, // same revision, other bytes
	} {
		if _, ok := c.get(other); ok {
			t.Errorf("%+v served a's entry", other)
		}
	}
	big := bytes.Repeat([]byte("x"), DerivedBudget/8)
	for i := range 20 {
		c.put(store.API{ID: string(rune('c' + i)), Revision: 1}, big)
		if c.bytes > DerivedBudget {
			t.Fatalf("cache holds %d bytes, over the budget %d", c.bytes, DerivedBudget)
		}
	}
}
