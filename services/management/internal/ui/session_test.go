package ui

import (
	"testing"
	"time"
)

// TestSessions: idle expiry, renewal by use, the bound, and ending.
func TestSessions(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := newSessions(12*time.Hour, 2, func() time.Time { return now })
	a, ok := s.create("key-a")
	if !ok || a.id == "" || a.csrf == "" || a.id == a.csrf {
		t.Fatalf("create: %+v %v", a, ok)
	}
	now = now.Add(11 * time.Hour)
	if _, ok := s.get(a.id); !ok {
		t.Fatal("a session used 11 h ago has ended")
	}
	now = now.Add(12*time.Hour - time.Second)
	if got, ok := s.get(a.id); !ok || got.key != "key-a" {
		t.Fatal("a session used just under 12 h ago has ended")
	}
	b, _ := s.create("key-b")
	if _, ok := s.create("key-c"); ok {
		t.Fatal("a third session while two were used within the minute")
	}
	now = now.Add(2 * time.Minute)
	c, ok := s.create("key-c")
	if !ok {
		t.Fatal("no room made from sessions idle for more than a minute")
	}
	if _, ok := s.get(a.id); ok {
		t.Fatal("the idle session made room but still works")
	}
	now = now.Add(12 * time.Hour)
	if _, ok := s.get(c.id); ok {
		t.Fatal("a session idle for 12 h still works")
	}
	s.end(b.id)
	if _, ok := s.get(b.id); ok {
		t.Fatal("an ended session still works")
	}
	if (&session{csrf: "x"}).validCSRF("") || !(&session{csrf: "x"}).validCSRF("x") {
		t.Fatal("validCSRF")
	}
}
