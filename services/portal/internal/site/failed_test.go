package site

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/services/portal/internal/store"
)

// onePage is a store holding one published page of product 1, as stored
// before the API checked content at write time.
type onePage struct{ page store.Page }

func (o onePage) outline() store.Outline {
	return store.Outline{Product: store.Product{ID: 1, Name: "p", UpdatedAt: o.page.UpdatedAt},
		Pages: []store.PageSummary{{ID: o.page.ID, Title: o.page.Title, Status: o.page.Status, Path: o.page.Path}}}
}

func (o onePage) Outlines(context.Context) ([]store.Outline, time.Time, error) {
	return []store.Outline{o.outline()}, time.Time{}, nil
}

func (o onePage) Outline(_ context.Context, product uint32) (store.Outline, time.Time, error) {
	if product != 1 {
		return store.Outline{}, time.Time{}, store.ErrNotFound
	}
	return o.outline(), time.Time{}, nil
}

func (o onePage) GetPage(_ context.Context, product, id uint32) (store.Page, error) {
	if product != 1 || id != o.page.ID {
		return store.Page{}, store.ErrNotFound
	}
	return o.page, nil
}

// deepHTML nests n elements.
func deepHTML(n int) string { return strings.Repeat("<div>", n) + "x" + strings.Repeat("</div>", n) }

func TestDeepContentDoesNotRender(t *testing.T) {
	if err := Renderable(deepHTML(600), false); !errors.Is(err, ErrUnrenderable) {
		t.Errorf("600 nested elements: %v, want ErrUnrenderable", err)
	}
	if err := Renderable(strings.Repeat("> ", 600)+"x", true); !errors.Is(err, ErrUnrenderable) {
		t.Errorf("600 nested Markdown quotes: %v, want ErrUnrenderable", err)
	}
	if err := Renderable(deepHTML(100), false); err != nil {
		t.Errorf("100 nested elements: %v", err)
	}
}

// TestFailedRenderNotRetried: a stored page that cannot be rendered answers
// the error page, and its failure is kept: later GETs do not render it again.
func TestFailedRenderNotRetried(t *testing.T) {
	page := store.Page{ID: 7, Title: "deep", Status: published, Content: deepHTML(600), UpdatedAt: time.Unix(100, 0)}
	s, err := New(onePage{page}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest("GET", "/products/1/docs/7", nil))
		if w.Code != http.StatusInternalServerError {
			t.Fatalf("GET %d: %d, want 500", i+1, w.Code)
		}
		if _, err, ok := s.cache.get(keyOf('p', 7, page.UpdatedAt)); !ok || !errors.Is(err, ErrUnrenderable) {
			t.Fatalf("GET %d: the failure is not kept (kept %v, %v)", i+1, ok, err)
		}
	}
	if n := s.cache.len(); n != 1 {
		t.Errorf("cache entries %d, want 1", n)
	}
}
