package store

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// open returns a store in a fresh folder, checked for consistency and closed
// when the test ends.
func open(t testing.TB) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "portal.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Check(); err != nil {
			t.Errorf("consistency check: %v", err)
		}
		s.Close()
	})
	return s, path
}

var ctx = context.Background()

func mustProduct(t testing.TB, s *Store, name string) Product {
	t.Helper()
	p, err := s.CreateProduct(ctx, Product{Name: name, CreatedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustPage(t testing.TB, s *Store, product uint32, title string, cats, tags []uint32) Page {
	t.Helper()
	p, err := s.CreatePage(ctx, product, func(p *Page, _ LabelLookup) error {
		p.Title, p.Status, p.Categories, p.Tags = title, "draft", cats, tags
		p.MarkdownContent, p.PreviewContent = "md "+title, "preview "+title
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustLabel(t testing.TB, s *Store, kind LabelKind, name string) Label {
	t.Helper()
	l, err := s.CreateLabel(ctx, kind, name)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestProductsIDsAreNeverReused(t *testing.T) {
	s, _ := open(t)
	a, b := mustProduct(t, s, "a"), mustProduct(t, s, "b")
	if a.ID != 1 || b.ID != 2 {
		t.Fatalf("ids: got %d, %d, want 1, 2", a.ID, b.ID)
	}
	if err := s.DeleteProduct(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	if c := mustProduct(t, s, "c"); c.ID != 3 {
		t.Errorf("id after a delete: got %d, want 3", c.ID)
	}
	if err := s.DeleteProduct(ctx, b.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("second delete: got %v, want ErrNotFound", err)
	}
}

func TestListProductsWindows(t *testing.T) {
	s, _ := open(t)
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		mustProduct(t, s, n)
	}
	for _, tc := range []struct {
		offset, limit int
		want          []string
	}{
		{0, 2, []string{"a", "b"}},
		{2, 2, []string{"c", "d"}},
		{4, 2, []string{"e"}},
		{5, 2, nil},
		{0, 100, []string{"a", "b", "c", "d", "e"}},
	} {
		list, err := s.ListProducts(ctx, tc.offset, tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range list {
			got = append(got, p.Name)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("ListProducts(%d, %d): got %v, want %v", tc.offset, tc.limit, got, tc.want)
		}
	}
}

func TestDeleteProductRemovesOnlyItsPages(t *testing.T) {
	s, _ := open(t)
	a, b := mustProduct(t, s, "a"), mustProduct(t, s, "b")
	pa := mustPage(t, s, a.ID, "of a", nil, nil)
	mustPage(t, s, a.ID, "also of a", nil, nil)
	pb := mustPage(t, s, b.ID, "of b", nil, nil)
	if err := s.DeleteProduct(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetPage(ctx, a.ID, pa.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("page of the deleted product: got %v, want ErrNotFound", err)
	}
	if _, err := s.ListPages(ctx, a.ID, 0, 10); !errors.Is(err, ErrNotFound) {
		t.Errorf("pages of the deleted product: got %v, want ErrNotFound", err)
	}
	if got, err := s.GetPage(ctx, b.ID, pb.ID); err != nil || got.Title != "of b" {
		t.Errorf("page of the other product: got %+v, %v", got, err)
	}
}

func TestPageBelongsToItsProduct(t *testing.T) {
	s, _ := open(t)
	a, b := mustProduct(t, s, "a"), mustProduct(t, s, "b")
	p := mustPage(t, s, a.ID, "t", nil, nil)
	if _, err := s.GetPage(ctx, b.ID, p.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetPage through another product: got %v, want ErrNotFound", err)
	}
	_, err := s.UpdatePage(ctx, b.ID, p.ID, func(*Page, LabelLookup) error { t.Error("update ran"); return nil })
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("UpdatePage through another product: got %v, want ErrNotFound", err)
	}
	if err := s.DeletePage(ctx, b.ID, p.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("DeletePage through another product: got %v, want ErrNotFound", err)
	}
	if _, err := s.CreatePage(ctx, 99, func(*Page, LabelLookup) error { return nil }); !errors.Is(err, ErrNotFound) {
		t.Errorf("CreatePage of a missing product: got %v, want ErrNotFound", err)
	}
}

func TestUpdatePageKeepsFieldsAndAbortsOnError(t *testing.T) {
	s, _ := open(t)
	prod := mustProduct(t, s, "a")
	p := mustPage(t, s, prod.ID, "before", nil, nil)
	refused := errors.New("refused")
	_, err := s.UpdatePage(ctx, prod.ID, p.ID, func(p *Page, _ LabelLookup) error {
		p.Title = "changed in vain"
		return refused
	})
	if !errors.Is(err, refused) {
		t.Fatalf("got %v, want the updater's error", err)
	}
	got, err := s.GetPage(ctx, prod.ID, p.ID)
	if err != nil || got.Title != "before" || got.MarkdownContent != "md before" || got.PreviewContent != "preview before" {
		t.Errorf("after a refused update: got %+v, %v", got, err)
	}
	// The updater cannot move a page.
	got, err = s.UpdatePage(ctx, prod.ID, p.ID, func(p *Page, _ LabelLookup) error {
		p.ID, p.ProductID, p.Title = 77, 78, "after"
		return nil
	})
	if err != nil || got.ID != p.ID || got.ProductID != prod.ID || got.Title != "after" {
		t.Errorf("update: got %+v, %v", got, err)
	}
}

func TestLabelsUniqueAndUnlinkedOnDelete(t *testing.T) {
	s, _ := open(t)
	for _, kind := range []LabelKind{Tags, Categories} {
		a, b := mustLabel(t, s, kind, "a"), mustLabel(t, s, kind, "b")
		if _, err := s.CreateLabel(ctx, kind, "a"); !errors.Is(err, ErrAlreadyExists) {
			t.Errorf("kind %d: duplicate name: got %v, want ErrAlreadyExists", kind, err)
		}
		if _, err := s.CreateLabel(ctx, kind, "A"); err != nil {
			t.Errorf("kind %d: names differing in case are distinct: %v", kind, err)
		}
		prod := mustProduct(t, s, "p")
		var cats, tags []uint32
		if kind == Tags {
			tags = []uint32{a.ID, b.ID}
		} else {
			cats = []uint32{a.ID, b.ID}
		}
		p := mustPage(t, s, prod.ID, "t", cats, tags)
		names := func(p Page) []string {
			if kind == Tags {
				return p.TagNames
			}
			return p.CategoryNames
		}
		if got := names(p); !slices.Equal(got, []string{"a", "b"}) {
			t.Errorf("kind %d: names: got %v", kind, got)
		}
		if err := s.DeleteLabel(ctx, kind, a.ID); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetPage(ctx, prod.ID, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		ids := got.Tags
		if kind == Categories {
			ids = got.Categories
		}
		if !slices.Equal(names(got), []string{"b"}) || !slices.Equal(ids, []uint32{b.ID}) {
			t.Errorf("kind %d: after deleting a: names %v, ids %v", kind, names(got), ids)
		}
		if _, err := s.CreateLabel(ctx, kind, "a"); err != nil {
			t.Errorf("kind %d: a deleted label's name is free again: %v", kind, err)
		}
		if err := s.DeleteLabel(ctx, kind, a.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("kind %d: second delete: got %v, want ErrNotFound", kind, err)
		}
	}
	tags, _ := s.ListLabels(ctx, Tags)
	cats, _ := s.ListLabels(ctx, Categories)
	if len(tags) != 3 || len(cats) != 3 {
		t.Errorf("lists: %d tags, %d categories, want 3 and 3", len(tags), len(cats))
	}
}

func TestLabelLookupSeesTheTransaction(t *testing.T) {
	s, _ := open(t)
	prod := mustProduct(t, s, "p")
	tag := mustLabel(t, s, Tags, "t")
	_, err := s.CreatePage(ctx, prod.ID, func(p *Page, exists LabelLookup) error {
		if !exists(Tags, tag.ID) || exists(Tags, tag.ID+1) || exists(Categories, tag.ID) {
			t.Error("lookup answers wrongly")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCredentialsAndReopen(t *testing.T) {
	s, path := open(t)
	if has, err := s.HasAdmin(ctx); err != nil || has {
		t.Fatalf("fresh store: HasAdmin %v, %v", has, err)
	}
	hash := []byte("0123456789abcdef0123456789abcdef")
	for range 2 { // idempotent
		if _, err := s.EnsureAdmin(ctx, hash, false); err != nil {
			t.Fatal(err)
		}
	}
	prod := mustProduct(t, s, "kept")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	*s = *s2 // the cleanup checks and closes the reopened store
	if ok, err := s.KeyValid(ctx, hash); err != nil || !ok {
		t.Errorf("KeyValid after reopen: %v, %v", ok, err)
	}
	if ok, _ := s.KeyValid(ctx, []byte("other")); ok {
		t.Error("KeyValid accepts an unknown hash")
	}
	if has, _ := s.HasAdmin(ctx); !has {
		t.Error("HasAdmin after reopen: false")
	}
	if got, err := s.GetProduct(ctx, prod.ID); err != nil || got.Name != "kept" {
		t.Errorf("product after reopen: %+v, %v", got, err)
	}
}

func TestSecondOpenIsRefused(t *testing.T) {
	_, path := open(t)
	start := time.Now()
	if _, err := Open(path); err == nil {
		t.Fatal("a second Open of a held file succeeded")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the refusal took %v", d)
	}
}

func BenchmarkListPages1000(b *testing.B) {
	s, _ := open(b)
	prod := mustProduct(b, s, "p")
	cat, tag := mustLabel(b, s, Categories, "c"), mustLabel(b, s, Tags, "t")
	for range 1000 {
		mustPage(b, s, prod.ID, "a tutorial page", []uint32{cat.ID}, []uint32{tag.ID})
	}
	b.ReportAllocs()
	for b.Loop() {
		list, err := s.ListPages(ctx, prod.ID, 0, 1000)
		if err != nil || len(list) != 1000 {
			b.Fatal(len(list), err)
		}
	}
}
