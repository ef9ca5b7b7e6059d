package store

import (
	"errors"
	"testing"
)

// TestCreateVersion: the child and the base's new record are one write;
// the child carries the base's ID; a refused child leaves the base as it
// was; a classic base is refused; a base changed meanwhile is read again.
func TestCreateVersion(t *testing.T) {
	s := open(t)
	put(t, s, oas("base", db(1)), oas("taken", db(2)), classic("old", db(3), "Old"))
	calls := 0
	edit := func(b API) (API, error) {
		calls++
		if calls == 1 { // another writer changes the base between the read and the write
			if err := s.UpdateAPI(bg, "base", OAS, func(o API) (API, error) { return o, nil }); err != nil {
				return b, err
			}
		}
		n := b
		n.Name = "versioned"
		return n, nil
	}
	if err := s.CreateVersion(bg, db(1), oas("v2", db(4)), edit); err != nil {
		t.Fatal(err)
	}
	if calls != 2 {
		t.Errorf("the base was made %d times, want 2 (read again after it moved)", calls)
	}
	child, err := s.GetAPI(bg, "v2")
	if err != nil || child.BaseID != "base" {
		t.Fatalf("child: %+v, %v", child, err)
	}
	if b, _ := s.GetAPI(bg, "base"); b.Name != "versioned" || b.DBID != db(1) {
		t.Errorf("base: %+v", b)
	}

	err = s.CreateVersion(bg, "base", oas("taken", db(5)), func(b API) (API, error) { b.Name = "changed"; return b, nil })
	if !errors.Is(err, ErrAlreadyExists) {
		t.Errorf("a taken child ID: %v", err)
	}
	if b, _ := s.GetAPI(bg, "base"); b.Name != "versioned" {
		t.Errorf("the base changed with a refused child: %+v", b)
	}
	if err := s.CreateVersion(bg, "old", oas("v3", db(6)), edit); !errors.Is(err, ErrNotOAS) {
		t.Errorf("a classic base: %v", err)
	}
	if err := s.CreateVersion(bg, "none", oas("v4", db(7)), edit); !errors.Is(err, ErrNotFound) {
		t.Errorf("no base: %v", err)
	}
}
