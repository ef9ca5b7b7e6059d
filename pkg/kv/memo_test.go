package kv_test

import (
	"testing"

	"github.com/gatehouse/gatehouse/pkg/kv"
)

func TestMemo(t *testing.T) {
	var m kv.Memo[string]
	if _, ok := m.Get(0); ok {
		t.Fatal("an empty memo answered revision 0")
	}
	m.Set(5, "five")
	if v, ok := m.Get(5); !ok || v != "five" {
		t.Fatalf("Get(5) = %q, %v; want five", v, ok)
	}
	if _, ok := m.Get(6); ok {
		t.Fatal("revision 5's value answered revision 6")
	}
	m.Set(4, "four") // an older read finishing late keeps the later value
	if v, ok := m.Get(5); !ok || v != "five" {
		t.Fatalf("after an older Set: Get(5) = %q, %v; want five", v, ok)
	}
	if _, ok := m.Get(4); ok {
		t.Fatal("an older revision's value replaced a later one")
	}
	m.Set(7, "")
	if v, ok := m.Get(7); !ok || v != "" {
		t.Fatalf("a zero value is held too: Get(7) = %q, %v", v, ok)
	}
}
