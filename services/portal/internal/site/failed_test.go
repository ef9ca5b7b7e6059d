package site

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/services/portal/internal/store"
)

// onePage is a store holding one published page of product 1, as stored
// before pages were rendered when written: without a rendering.
type onePage struct {
	mu      sync.Mutex
	page    store.Page
	renders int // SetRendered calls that rendered
}

func (o *onePage) outline() store.Outline {
	return store.Outline{Product: store.Product{ID: 1, Name: "p", UpdatedAt: o.page.UpdatedAt},
		Pages: []store.PageSummary{{ID: o.page.ID, Title: o.page.Title, Status: o.page.Status, Path: o.page.Path}}}
}

func (o *onePage) Outlines(context.Context) ([]store.Outline, time.Time, error) {
	return []store.Outline{o.outline()}, time.Time{}, nil
}

func (o *onePage) Outline(_ context.Context, product uint32) (store.Outline, time.Time, error) {
	if product != 1 {
		return store.Outline{}, time.Time{}, store.ErrNotFound
	}
	return o.outline(), time.Time{}, nil
}

func (o *onePage) ShownPage(_ context.Context, product, id uint32, _ bool) (store.Page, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if product != 1 || id != o.page.ID {
		return store.Page{}, store.ErrNotFound
	}
	p := o.page
	p.Content = ""
	return p, nil
}

func (o *onePage) Unrendered(_ context.Context, version, _ int) ([]store.PageRef, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.page.Rendered != nil && o.page.Rendered.Version == version {
		return nil, nil
	}
	return []store.PageRef{{Product: 1, ID: o.page.ID, UpdatedAt: o.page.UpdatedAt}}, nil
}

func (o *onePage) SetRendered(_ context.Context, _ store.PageRef, render func(store.Page) *store.Rendered) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.renders++
	o.page.Rendered = render(o.page)
	return nil
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

// TestHTMLOverMaxRefused: content whose HTML would exceed MaxHTML does not
// render — Markdown stops converting there — and one just under does.
func TestHTMLOverMaxRefused(t *testing.T) {
	row := "| a | b | c |\n"
	table := "| x | y | z |\n|---|---|---|\n" + strings.Repeat(row, MaxHTML/len(row)) // about 4 MiB of Markdown, 12 MiB of HTML
	if err := Renderable(table, true); !errors.Is(err, ErrUnrenderable) || !strings.Contains(err.Error(), "4 MiB") {
		t.Errorf("a Markdown table of %d bytes: %v, want ErrUnrenderable naming 4 MiB", len(table), err)
	}
	para := strings.Repeat("<p>abcdefgh</p>", MaxHTML/15+1)
	if err := Renderable(para, false); !errors.Is(err, ErrUnrenderable) {
		t.Errorf("HTML of %d bytes: %v, want ErrUnrenderable", len(para), err)
	}
	if err := Renderable(para[:MaxHTML-15], false); err != nil {
		t.Errorf("HTML just under the limit: %v", err)
	}
}

// TestStoredPagesRenderedOnce: a page stored before pages were rendered
// when written answers 503 (Retry-After) and wakes RenderStored, which
// renders it once and keeps the rendering — for content that cannot be
// rendered, a notice; later GETs show what is kept and render nothing.
func TestStoredPagesRenderedOnce(t *testing.T) {
	for _, c := range []struct {
		name, content, want string
	}{
		{"renderable", "<h2>Hello</h2><p>there</p>", `<h2 id="hello">Hello</h2>`},
		{"too deep", deepHTML(600), "This page cannot be shown"},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := &onePage{page: store.Page{ID: 7, ProductID: 1, Title: "t", Status: published, Content: c.content, UpdatedAt: time.Unix(100, 0)}}
			s, err := New(st, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			w := httptest.NewRecorder()
			s.ServeHTTP(w, httptest.NewRequest("GET", "/products/1/docs/7", nil))
			if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" {
				t.Fatalf("GET before the rendering: %d (Retry-After %q), want 503 with Retry-After", w.Code, w.Header().Get("Retry-After"))
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { s.RenderStored(ctx); close(done) }()
			deadline := time.Now().Add(5 * time.Second)
			for {
				w = httptest.NewRecorder()
				s.ServeHTTP(w, httptest.NewRequest("GET", "/products/1/docs/7", nil))
				if w.Code == http.StatusOK || time.Now().After(deadline) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), c.want) {
				t.Fatalf("GET after RenderStored: %d %.300s, want 200 showing %q", w.Code, w.Body, c.want)
			}
			for range 3 {
				s.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/products/1/docs/7", nil))
			}
			cancel()
			<-done
			if st.renders != 1 {
				t.Errorf("the page was rendered %d times, want once", st.renders)
			}
		})
	}
}
