package store

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
)

func pageIDs(t *testing.T, s *Store, product uint32, offset, limit int) []uint32 {
	t.Helper()
	list, err := s.ListPages(ctx, product, offset, limit)
	if err != nil {
		t.Fatal(err)
	}
	var ids []uint32
	for _, p := range list {
		ids = append(ids, p.ID)
	}
	return ids
}

func TestPageOrder(t *testing.T) {
	s, _ := open(t)
	prod, other := mustProduct(t, s, "p"), mustProduct(t, s, "o")
	a, b, c := mustPage(t, s, prod.ID, "a", nil, nil), mustPage(t, s, prod.ID, "b", nil, nil), mustPage(t, s, prod.ID, "c", nil, nil)
	mustPage(t, s, other.ID, "x", nil, nil)
	if got, want := pageIDs(t, s, prod.ID, 0, 10), []uint32{a.ID, b.ID, c.ID}; !slices.Equal(got, want) {
		t.Fatalf("before a reorder: got %v, want %v", got, want)
	}
	var seen []uint32
	got, err := s.ReorderPages(ctx, prod.ID, func(current []uint32) ([]uint32, error) {
		seen = current
		return []uint32{c.ID, a.ID}, nil // b left out: it keeps its place after them
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []uint32{a.ID, b.ID, c.ID}; !slices.Equal(seen, want) {
		t.Errorf("reorder saw %v, want %v", seen, want)
	}
	if len(got) != 3 || got[0].Title != "c" || got[1].Title != "a" || got[2].Title != "b" {
		t.Errorf("reorder answered %+v, want c, a, b", got)
	}
	d := mustPage(t, s, prod.ID, "d", nil, nil)
	if got, want := pageIDs(t, s, prod.ID, 0, 10), []uint32{c.ID, a.ID, b.ID, d.ID}; !slices.Equal(got, want) {
		t.Fatalf("after a reorder and a create: got %v, want %v", got, want)
	}
	if got, want := pageIDs(t, s, prod.ID, 1, 2), []uint32{a.ID, b.ID}; !slices.Equal(got, want) {
		t.Errorf("window 1+2: got %v, want %v", got, want)
	}
	if got := pageIDs(t, s, prod.ID, 9, 2); len(got) != 0 {
		t.Errorf("window past the end: got %v", got)
	}
	if err := s.DeletePage(ctx, prod.ID, a.ID); err != nil {
		t.Fatal(err)
	}
	if got, want := pageIDs(t, s, prod.ID, 0, 10), []uint32{c.ID, b.ID, d.ID}; !slices.Equal(got, want) {
		t.Errorf("after a delete: got %v, want %v", got, want)
	}
	wantErr := errors.New("refused")
	if _, err := s.ReorderPages(ctx, prod.ID, func([]uint32) ([]uint32, error) { return nil, wantErr }); !errors.Is(err, wantErr) {
		t.Errorf("refused reorder: got %v", err)
	}
	if got, want := pageIDs(t, s, prod.ID, 0, 10), []uint32{c.ID, b.ID, d.ID}; !slices.Equal(got, want) {
		t.Errorf("after a refused reorder: got %v, want %v", got, want)
	}
	if _, err := s.ReorderPages(ctx, 99, func(c []uint32) ([]uint32, error) { return c, nil }); !errors.Is(err, ErrNotFound) {
		t.Errorf("reorder of a missing product: got %v, want ErrNotFound", err)
	}
	o, changed, err := s.Outline(ctx, prod.ID)
	if err != nil {
		t.Fatal(err)
	}
	if changed.IsZero() || len(o.Pages) != 3 || o.Pages[0].Title != "c" || o.Pages[2].Title != "d" {
		t.Errorf("outline: %+v changed %v", o.Pages, changed)
	}
	if err := s.DeleteProduct(ctx, prod.ID); err != nil {
		t.Fatal(err)
	}
	all, _, err := s.Outlines(ctx)
	if err != nil || len(all) != 1 || all[0].Product.ID != other.ID || len(all[0].Pages) != 1 {
		t.Errorf("outlines after a delete: %+v, %v", all, err)
	}
}

func TestPathUniquePerProduct(t *testing.T) {
	s, _ := open(t)
	prod, other := mustProduct(t, s, "p"), mustProduct(t, s, "o")
	withPath := func(product uint32, path string) (Page, error) {
		return s.CreatePage(ctx, product, func(p *Page, _ LabelLookup) error {
			p.Title, p.Path = "t", path
			return nil
		})
	}
	first, err := withPath(prod.ID, "guides/start")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := withPath(other.ID, "guides/start"); err != nil {
		t.Errorf("same path in another product: %v", err)
	}
	_, err = withPath(prod.ID, "/guides/start/")
	var taken *PathTakenError
	if !errors.As(err, &taken) || taken.By != first.ID || !errors.Is(err, ErrPathTaken) {
		t.Errorf("same path after cleaning: got %v, want taken by %d", err, first.ID)
	}
	if _, err := withPath(prod.ID, ""); err != nil {
		t.Errorf("no path: %v", err)
	}
	if _, err := withPath(prod.ID, "/"); err != nil {
		t.Errorf("a path that cleans to nothing is no path: %v", err)
	}
	second, err := withPath(prod.ID, "other")
	if err != nil {
		t.Fatal(err)
	}
	setPath := func(id uint32, path string) error {
		_, err := s.UpdatePage(ctx, prod.ID, id, func(p *Page, _ LabelLookup) error {
			p.Path = path
			return nil
		})
		return err
	}
	if err := setPath(second.ID, "guides/start"); !errors.Is(err, ErrPathTaken) {
		t.Errorf("update to a taken path: got %v", err)
	}
	if err := setPath(first.ID, "/guides/start"); err != nil {
		t.Errorf("a page keeps its own path: %v", err)
	}
	if err := setPath(first.ID, "moved"); err != nil {
		t.Fatal(err)
	}
	if err := setPath(second.ID, "guides/start"); err != nil {
		t.Errorf("a freed path: %v", err)
	}
}

// TestConcurrentPathsStayUnique: the path check reads the product's page
// range in the transaction that writes the page, so of many concurrent pages
// with one Path exactly one is stored.
func TestConcurrentPathsStayUnique(t *testing.T) {
	s, _ := open(t)
	prod := mustProduct(t, s, "p")
	var wg sync.WaitGroup
	var mu sync.Mutex
	stored, taken := 0, 0
	for i := range 16 {
		wg.Go(func() {
			_, err := s.CreatePage(ctx, prod.ID, func(p *Page, _ LabelLookup) error {
				p.Title, p.Path = fmt.Sprint("page ", i), "/same/"
				return nil
			})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				stored++
			case errors.Is(err, ErrPathTaken):
				taken++
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if stored != 1 || taken != 15 {
		t.Fatalf("16 concurrent pages with one path: %d stored, %d refused; want 1 and 15", stored, taken)
	}
}
