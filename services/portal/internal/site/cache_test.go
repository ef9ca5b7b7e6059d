package site

import (
	"html/template"
	"strings"
	"testing"
	"time"
)

func TestCacheStaysWithinItsBudget(t *testing.T) {
	c := newCache(1000)
	body := Body{HTML: template.HTML(strings.Repeat("x", 200))} // 264 bytes counted
	at := time.Unix(1, 0)
	for id := uint32(1); id <= 5; id++ {
		c.put(keyOf('p', id, at), body, nil)
	}
	if c.len() != 3 {
		t.Errorf("entries: got %d, want 3 (3×264 ≤ 1000)", c.len())
	}
	if _, _, ok := c.get(keyOf('p', 1, at)); ok {
		t.Error("the least recently used entry was kept")
	}
	if _, _, ok := c.get(keyOf('p', 5, at)); !ok {
		t.Error("the newest entry was dropped")
	}
	if _, _, ok := c.get(keyOf('p', 5, at.Add(time.Nanosecond))); ok {
		t.Error("another UpdatedAt hit the cache")
	}
	c.put(keyOf('p', 9, at), Body{HTML: template.HTML(strings.Repeat("x", 2000))}, nil)
	if _, _, ok := c.get(keyOf('p', 9, at)); ok || c.len() != 3 {
		t.Errorf("a body over the budget was kept (entries %d)", c.len())
	}
}
