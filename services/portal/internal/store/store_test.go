package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/pkg/kv"
	"github.com/gatehouse/gatehouse/pkg/kv/boltkv"
	"github.com/gatehouse/gatehouse/pkg/kv/kvtest"
)

// open returns a store on a bbolt engine in a fresh folder; when the test
// ends the indexes must agree with the records, the file must pass bbolt's
// check, and the engine is closed.
func open(t testing.TB) (*Store, string) {
	t.Helper()
	if openOther != nil {
		return openOther(t), ""
	}
	path := filepath.Join(t.TempDir(), "portal.db")
	return openAt(t, path), path
}

// openOther, when set, opens the store of open on another engine (etcd_test.go).
var openOther func(t testing.TB) *Store

func openAt(t testing.TB, path string) *Store {
	t.Helper()
	e, err := boltkv.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	// Every update function runs twice, as an engine retrying on conflict may run it.
	s, err := Open(ctx, kvtest.Twice(e))
	if err != nil {
		e.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if e.Ready(ctx) != nil {
			return // the test closed it
		}
		if err := s.checkIndexes(); err != nil {
			t.Errorf("indexes: %v", err)
		}
		if err := e.Check(); err != nil {
			t.Errorf("consistency check: %v", err)
		}
		e.Close()
	})
	return s
}

// checkIndexes verifies in one snapshot that each label name index holds
// exactly the names of the labels, and that every page belongs to an
// existing product.
func (s *Store) checkIndexes() error {
	return s.kv.View(ctx, func(tx kv.ReadTx) error {
		for kind, keys := range labelLayout {
			want, got := map[string]uint32{}, map[string]uint32{}
			if err := tx.Scan(keys.prefix, nil, func(_, v []byte) error {
				l, err := decode[Label](v, "label")
				want[l.Name] = l.ID
				return err
			}); err != nil {
				return err
			}
			if err := tx.Scan(keys.namePrefix, nil, func(k, v []byte) error {
				got[string(k[len(keys.namePrefix):])] = lastID(v)
				return nil
			}); err != nil {
				return err
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				return fmt.Errorf("kind %d: name index %v, want %v", kind, got, want)
			}
		}
		return tx.Scan(pagePrefix, nil, func(k, _ []byte) error {
			if err := mustExist(tx, productKey(lastID(k[:len(pagePrefix)+4]))); err != nil {
				return fmt.Errorf("page %x: its product: %w", k, err)
			}
			return nil
		})
	})
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
	s.kv.Close()
	s = openAt(t, path)
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

// TestConcurrentFirstAdmin: replicas bootstrapping at once create one key.
func TestConcurrentFirstAdmin(t *testing.T) {
	s, _ := open(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	created := 0
	for i := range 16 {
		wg.Go(func() {
			ok, err := s.EnsureAdmin(ctx, fmt.Appendf(nil, "hash-%02d", i), true)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if ok {
				created++
			}
		})
	}
	wg.Wait()
	var keys int
	s.kv.View(ctx, func(tx kv.ReadTx) (err error) { keys, err = tx.Count(apiKeyPrefix); return err })
	if created != 1 || keys != 1 {
		t.Fatalf("16 concurrent first-admin bootstraps: %d reported created, %d keys; want 1 and 1", created, keys)
	}
}

// TestConcurrentLabelNamesStayUnique: the name check and the write are one
// transaction, so one of many concurrent creations of a name wins.
func TestConcurrentLabelNamesStayUnique(t *testing.T) {
	s, _ := open(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	results := map[error]int{}
	for range 16 {
		wg.Go(func() {
			_, err := s.CreateLabel(ctx, Tags, "same")
			mu.Lock()
			results[err]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if results[nil] != 1 || results[ErrAlreadyExists] != 15 {
		t.Fatalf("16 concurrent creations of one name: %v, want 1 success and 15 ErrAlreadyExists", results)
	}
}

// TestUpgradesVersion1File opens a file written by the bbolt store before
// the kv seam (testdata/v1.db: product 1 "payments" with pages 1-3 ordered
// 3, 1, 2, each with tag 1 "beginner" and category 1 "guides"; product 2
// deleted with its page 4; one admin key).
func TestUpgradesVersion1File(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "v1.db"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "portal.db")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	s := openAt(t, path)
	products, err := s.ListProducts(ctx, 0, 10)
	if err != nil || len(products) != 1 || products[0].Name != "payments" || products[0].Path != "pay" {
		t.Fatalf("products after the upgrade: %+v, %v", products, err)
	}
	pages, err := s.ListPages(ctx, 1, 0, 10)
	var got []string
	for _, p := range pages {
		got = append(got, fmt.Sprint(p.ID, p.Title, p.TagNames, p.CategoryNames))
	}
	if want := []string{"3three[beginner] [guides]", "1one[beginner] [guides]", "2two[beginner] [guides]"}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("pages after the upgrade: %q, %v; want %q", got, err, want)
	}
	if ok, err := s.KeyValid(ctx, []byte("0123456789abcdef0123456789abcdef")); err != nil || !ok {
		t.Errorf("the admin key after the upgrade: %v, %v", ok, err)
	}
	if _, err := s.CreateLabel(ctx, Tags, "beginner"); !errors.Is(err, ErrAlreadyExists) {
		t.Errorf("the tag name index after the upgrade: %v, want ErrAlreadyExists", err)
	}
	if p := mustProduct(t, s, "next"); p.ID != 3 {
		t.Errorf("next product id: %d, want 3 (the version-1 sequence carries over)", p.ID)
	}
	if p := mustPage(t, s, 1, "four", nil, nil); p.ID != 5 {
		t.Errorf("next page id: %d, want 5", p.ID)
	}
	var legacy int
	s.kv.View(ctx, func(tx kv.ReadTx) (err error) { legacy, err = tx.Count(legacyPrefix); return err })
	if legacy != 0 {
		t.Errorf("%d legacy keys left after the upgrade, want 0", legacy)
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
